package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/climatesearch/climatesearch/core"
)

// Tool names of discovery: what could replace a resource, what the
// service holds.
const (
	ToolAlternatives = "find_alternatives"
	ToolCatalogs     = "list_catalogs"
)

func (s *Server) discoveryTools() []tool {
	return []tool{
		{
			def: mcp.Tool{
				Name:  ToolAlternatives,
				Title: "Find lower-carbon alternatives to a resource",
				Description: "Answer \"what could I use instead that emits less?\": the resources that can replace the given one (a variant of the same product, " +
					"the same category or BK04 class, or a full-text match on its name, Swedish or Danish), each restated in one unit (the resource's declared unit, or unit) " +
					"and lower in the chosen impact, with its value and the saving (absolute and in percent). The resource's own siblings (the climate-improved variant of " +
					"the same concrete, the scrap-based aluminium) come first, then by value ascending. Resources that cannot be stated in the unit are left out and counted " +
					"in notes, never shown in another unit; when nothing lower exists the answer says so. Looks in the resource's own catalog unless databases says otherwise. " +
					"Cite the answer's source.",
				RawInputSchema:  alternativesInput,
				RawOutputSchema: alternativesOutput,
				Annotations:     readOnly("Find alternatives"),
			},
			handler: s.alternatives,
		},
		{
			def: mcp.Tool{
				Name:  ToolCatalogs,
				Title: "List the catalogs and their state",
				Description: "List the catalogs this service holds: id and aliases, name, publisher and the source text to cite, the dataset version served, " +
					"live and withdrawn resource counts, when and from where the last ingest came (json: the publisher's API, excel: its workbooks, " +
					"fixture: the embedded demo snapshot, file: operator data), the next scheduled ingest, and vector coverage (how much semantic search reaches). " +
					"Text in Swedish, English and Danish is searchable.",
				RawInputSchema:  catalogsInput,
				RawOutputSchema: catalogsOutput,
				Annotations:     readOnly("List catalogs"),
			},
			handler: s.catalogs,
		},
	}
}

func (s *Server) alternatives(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := parseArgs(req, "id", "impact", "unit", "databases", "limit", "lang")
	if err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	ar := core.AlternativesRequest{}
	if ar.Ref, err = a.id("id", `"national:6000000032"`); err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	imp, err := a.str("impact")
	if err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	if ar.Impact, err = core.ParseImpact(imp); err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	if ar.Unit, err = a.str("unit"); err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	dbs, err := a.strings("databases")
	if err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	if len(dbs) > 0 {
		if ar.Catalogs, err = core.ParseCatalogs(dbs); err != nil {
			return s.fail(ctx, ToolAlternatives, err), nil
		}
	}
	if ar.Limit, err = a.integer("limit", 1, core.MaxAlternatives, core.DefaultAlternatives); err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	if ar.Lang, err = a.lang(); err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	alt, err := s.d.Compare.Alternatives(ctx, ar)
	if err != nil {
		return s.fail(ctx, ToolAlternatives, err), nil
	}
	return structured(alt, alternativesText(&alt))
}

func (s *Server) catalogs(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if _, err := parseArgs(req); err != nil {
		return s.fail(ctx, ToolCatalogs, err), nil
	}
	list, err := s.d.Catalogs.CatalogList(ctx)
	if err != nil {
		return s.fail(ctx, ToolCatalogs, err), nil
	}
	return structured(list, catalogsText(&list))
}

func alternativesText(a *core.Alternatives) string {
	var b strings.Builder
	per := "kg CO2e per " + a.Unit
	fmt.Fprintf(&b, "%s of %s: %s %s.\n", impactName(a.Impact), label(&a.Resource), fmtNum(a.Value), per)
	if len(a.Alternatives) == 0 {
		b.WriteString("No lower alternative found.\n")
	} else {
		fmt.Fprintf(&b, "%d of %d comparable resources emit less; the %d best:\n", a.Lower, a.Considered, len(a.Alternatives))
		for i, x := range a.Alternatives {
			pct := ""
			if x.SavingPercent != nil {
				pct = fmt.Sprintf(" (%.1f %%)", *x.SavingPercent)
			}
			fmt.Fprintf(&b, "%d. %s: %s %s, saves %s%s [%s]\n", i+1, label(&x.Resource), fmtNum(x.Value), per, fmtNum(x.Saving), pct, reasonText(x.Reasons))
		}
	}
	for _, n := range a.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	fmt.Fprintf(&b, "Source: %s", a.Source)
	return b.String()
}

func reasonText(rs []string) string {
	words := map[string]string{
		core.ReasonSibling:  "variant of the same product",
		core.ReasonCategory: "same category",
		core.ReasonBK04:     "same BK04 class",
		core.ReasonName:     "name match",
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = words[r]
	}
	return strings.Join(out, ", ")
}

func catalogsText(l *core.CatalogList) string {
	var b strings.Builder
	for _, c := range l.Catalogs {
		fmt.Fprintf(&b, "%s", c.ID)
		if len(c.Aliases) > 0 {
			fmt.Fprintf(&b, " (alias %s)", strings.Join(c.Aliases, ", "))
		}
		fmt.Fprintf(&b, ": %s, published by %s. ", c.Name, c.Publisher)
		version := orDash(c.Version)
		if c.Demo {
			version += ", the embedded demo snapshot, not a publisher's release"
		}
		fmt.Fprintf(&b, "Version %s; %d live, %d withdrawn resources", version, c.Live, c.Withdrawn)
		if c.LastIngest != nil {
			fmt.Fprintf(&b, "; last ingest %s from %s", c.LastIngest.UTC().Format("2006-01-02 15:04 UTC"), c.LastOrigin)
		}
		if c.NextIngest != nil {
			fmt.Fprintf(&b, "; next %s", c.NextIngest.UTC().Format("2006-01-02 15:04 UTC"))
		}
		if c.Vectors.EmbedderID != "" {
			fmt.Fprintf(&b, "; vectors for %d of %d", c.Vectors.Current, c.Vectors.Total)
		}
		fmt.Fprintf(&b, ". Cite: %s\n", c.Source)
	}
	b.WriteString("Text in Swedish, English and Danish is searchable with search_climate_data.")
	return b.String()
}

// --- Schemas ---

var impactProp = obj{
	{"type", "string"},
	{"enum", []string{string(core.ImpactTypical), string(core.ImpactConservative), string(core.ImpactA4), string(core.ImpactA51)}},
	{"default", string(core.ImpactTypical)},
	{"description", "Which value to compare: typical (default; typical A1-A3 GWP-GHG), conservative (the conservative A1-A3 of Swedish climate declarations), a4 (transport to site) or a5_1 (construction-site waste)."},
}

var alternativesInput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{
		{"id", obj{{"type", "string"}, {"minLength", 1}, {"maxLength", maxRefLen}, {"description", "The resource to replace. " + idDesc}}},
		{"impact", impactProp},
		{"unit", obj{
			{"type", "string"},
			{"description", "Unit to state every value in, e.g. kg, m3 (m³), m2 (m²); the resource's declared unit when omitted. It must be the resource's declared unit or reachable through its conversions; candidates that cannot be stated in it are left out."},
		}},
		{"databases", obj{
			{"type", "array"},
			{"items", obj{{"type", "string"}, {"enum", []string{string(core.National), string(core.DKBR), string(core.BR25)}}}},
			{"uniqueItems", true},
			{"description", "Catalogs to look in; omit for the resource's own catalog. national: Boverket Klimatdatabas (Sweden); dkbr (alias br25): the Danish BR18/BR25 generic data."},
		}},
		{"limit", obj{{"type", "integer"}, {"minimum", 1}, {"maximum", core.MaxAlternatives}, {"default", core.DefaultAlternatives}, {"description", "How many alternatives to return, siblings first then lowest first."}}},
		{"lang", langProp(langShown)},
	}},
	{"required", []string{"id"}},
	{"additionalProperties", false},
})

func alternativeSchema() obj {
	props := append(resourceProps(),
		kv{"value", num("The alternative's impact per the answer's unit, kg CO2e.")},
		kv{"saving", num("The given resource's value minus this one's, per the answer's unit: how much less it emits.")},
		kv{"saving_percent", num("saving relative to the given resource's value, in percent; absent when that value is not positive.")},
		kv{"reasons", obj{{"type", "array"}, {"items", obj{{"type", "string"}, {"enum", []string{core.ReasonSibling, core.ReasonCategory, core.ReasonBK04, core.ReasonName}}}},
			{"description", "Why it was considered comparable, strongest first: sibling (a variant of the same product), same_category, same_bk04, name_match."}}},
		kv{"details", str("REST path of the full resource; its catalog:id works with get_resource_details and compare_resources.")},
	)
	return obj{
		{"type", "object"},
		{"properties", props},
		{"required", append(append([]string(nil), resourceRequired...), "value", "saving", "reasons", "details")},
	}
}

var alternativesOutput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{
		{"source", str("Attribution to cite: the publishers of the catalogs looked in.")},
		{"resource", resourceSchema("The resource to replace.")},
		{"impact", obj{{"type", "string"}, {"enum", []string{string(core.ImpactTypical), string(core.ImpactConservative), string(core.ImpactA4), string(core.ImpactA51)}}, {"description", "Which value was compared."}}},
		{"unit", str("The unit every value is stated per.")},
		{"value", num("The given resource's impact per unit, kg CO2e.")},
		{"considered", obj{{"type", "integer"}, {"description", "Comparable resources that could be stated per unit, lower or not."}}},
		{"lower", obj{{"type", "integer"}, {"description", "How many of them emit less (alternatives holds the first limit)."}}},
		{"alternatives", obj{{"type", "array"}, {"items", alternativeSchema()}, {"description", "Lower-impact resources, siblings first, then by value ascending."}}},
		{"notes", obj{{"type", "array"}, {"items", obj{{"type", "string"}}}, {"description", "When nothing lower exists, and what was left out (other units, no published value)."}}},
	}},
	{"required", []string{"source", "resource", "impact", "unit", "value", "considered", "lower", "alternatives"}},
})

var catalogsInput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{}},
	{"required", []string{}},
	{"additionalProperties", false},
})

func timeOrNull(desc string) obj {
	return obj{{"type", []string{"string", "null"}}, {"format", "date-time"}, {"description", desc}}
}

var catalogsOutput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{
		{"source", str("Attribution to cite.")},
		{"catalogs", obj{{"type", "array"}, {"items", obj{
			{"type", "object"},
			{"properties", obj{
				{"id", obj{{"type", "string"}, {"enum", []string{string(core.National), string(core.DKBR)}}, {"description", "Catalog id, the prefix of catalog:id."}}},
				{"aliases", obj{{"type", "array"}, {"items", obj{{"type", "string"}}}, {"description", "Other names accepted for the id (br25 for dkbr)."}}},
				{"name", str("Name of the catalog.")},
				{"publisher", str("Authority that publishes the data.")},
				{"source", str("Attribution to cite when using values from this catalog.")},
				{"version", str("Dataset version served; empty before the first ingest.")},
				{"live", obj{{"type", "integer"}, {"description", "Searchable resources."}}},
				{"withdrawn", obj{{"type", "integer"}, {"description", "Resources that left the publisher's latest release, still readable by id."}}},
				{"demo", boolean("True while the catalog serves the embedded demo snapshot, not a publisher's release.")},
				{"last_ingest", timeOrNull("When the data last changed; null before the first ingest.")},
				{"last_origin", obj{{"type", "string"}, {"enum", []string{string(core.OriginJSON), string(core.OriginExcel), string(core.OriginFixture), string(core.OriginFile)}}, {"description", "Where the last ingest came from: json (publisher API), excel (its workbooks), fixture (demo snapshot), file (operator data)."}}},
				{"next_ingest", timeOrNull("When the scheduled upstream ingest runs next; null when none is scheduled.")},
				{"vectors", obj{
					{"type", "object"},
					{"description", "Embedding coverage of the live resources."},
					{"properties", obj{
						{"embedder_id", str("The embedder; absent when none is configured.")},
						{"total", obj{{"type", "integer"}}},
						{"current", obj{{"type", "integer"}, {"description", "Resources with a vector of their current content."}}},
						{"stale", obj{{"type", "integer"}, {"description", "Resources whose vector is being recomputed."}}},
						{"missing", obj{{"type", "integer"}, {"description", "Resources without a vector yet."}}},
						{"coverage", num("current / total: the share semantic search reaches.")},
					}},
				}},
			}},
			{"required", []string{"id", "aliases", "name", "publisher", "source", "version", "live", "withdrawn", "demo", "last_ingest", "next_ingest", "vectors"}},
		}}}},
	}},
	{"required", []string{"source", "catalogs"}},
})
