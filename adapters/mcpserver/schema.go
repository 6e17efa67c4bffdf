package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// obj is a JSON object that keeps its keys in the order written, so the
// schemas an agent reads list the important properties first.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // static schemas: cannot fail
	}
	return b
}

func str(desc string) obj     { return obj{{"type", "string"}, {"description", desc}} }
func num(desc string) obj     { return obj{{"type", "number"}, {"description", desc}} }
func boolean(desc string) obj { return obj{{"type", "boolean"}, {"description", desc}} }

// langProp is the lang argument every tool takes.
func langProp(desc string) obj {
	return obj{
		{"type", "string"},
		{"enum", []string{string(core.Swedish), string(core.English)}},
		{"default", string(core.Swedish)},
		{"description", desc},
	}
}

const langShown = "Language shown first in name and description (both languages are always returned): sv (Swedish, default) or en (English)."

// --- Input schemas ---

var searchInput = mustJSON(obj{
	{"type", "object"},
	{"properties", append(obj{
		{"query", obj{
			{"type", "string"},
			{"minLength", 1},
			{"maxLength", core.MaxQueryLen},
			{"description", "What to look for: a product or material name, a synonym, or words of its description, in Swedish, English or Danish, e.g. \"spånskiva\", \"cross laminated timber\", \"betong C30/37\", \"mineral wool insulation\", \"mineraluld\" (the dkbr catalog's Danish names); the German ÖKOBAUDAT names of dkbr rows are found as exact words. Set lang to the query's language (either for Danish or German)."},
		}},
		{"lang", langProp("Language of the query, and shown first in each hit's name and description (both languages are always returned): sv (Swedish, default) or en (English).")},
		{"databases", obj{
			{"type", "array"},
			{"items", obj{{"type", "string"}, {"enum", []string{string(core.National), string(core.DKBR), string(core.BR25)}}}},
			{"uniqueItems", true},
			{"description", "Catalogs to search; omit (or []) for all. national: Boverket Klimatdatabas (Sweden). dkbr: BR18/BR25 Bilag 2 Tabel 7 generic data (Denmark); br25 is an alias of dkbr."},
		}},
		{"limit", obj{
			{"type", "integer"},
			{"minimum", 1},
			{"maximum", maxLimit},
			{"default", core.DefaultLimit},
			{"description", "How many hits to return, best first: 1 to 50, default 10."},
		}},
		{"offset", obj{
			{"type", "integer"},
			{"minimum", 0},
			{"maximum", core.MaxOffset},
			{"default", 0},
			{"description", "How many hits to skip, for the next page: 0 to 1000, default 0. The answer's total says how many match; ask offset=10 with limit=10 for hits 11 to 20."},
		}},
		{"category", str("Keep only resources of this category, matched in Swedish or English ignoring case, e.g. \"Betong\", \"Insulation\". An unknown category is refused naming the closest ones; facets [\"category\"] lists a search's categories.")},
		{"unit", str("Keep only resources declared in this unit, e.g. kg, m2 (= m²), m3 (= m³), kWh, MJ. Values are per declared unit, so set it to sort or range-filter comparable values; facets [\"unit\"] lists a search's units.")},
		{"sort", obj{
			{"type", "string"},
			{"enum", sortValues()},
			{"description", "Order the whole match set by a value instead of relevance: a1a3 (typical A1-A3), a1a3_conservative, a4, a5_1, ascending (lowest first) or with a leading - descending. The matches must share one declared unit: add unit, or the call fails naming the units found. Resources without the value come last."},
		}},
		{"facets", obj{
			{"type", "array"},
			{"items", obj{{"type", "string"}, {"enum", core.FacetFields}}},
			{"uniqueItems", true},
			{"description", "Count the whole match set (after the filters, not just this page) by category, unit and/or catalog; the answer's facets lists each value with its count, most frequent first."},
		}},
		{"highlight", obj{
			{"type", "boolean"},
			{"default", false},
			{"description", "true adds to each hit highlight.name and highlight.description: the shown texts, HTML-escaped, with the words the query matched in <mark>…</mark>."},
		}},
	}, rangeProps()...)},
	{"required", []string{"query"}},
	{"additionalProperties", false},
})

// sortValues are the sort argument's values: each impact field, ascending
// and with a leading - descending.
func sortValues() []string {
	var out []string
	for _, f := range core.ImpactFields {
		out = append(out, f, "-"+f)
	}
	return out
}

// rangeProps are the impact-range arguments, <field>_min and <field>_max.
func rangeProps() obj {
	names := map[string]string{
		"a1a3":              "typical A1-A3",
		"a1a3_conservative": "conservative A1-A3",
		"a4":                "A4 (transport to site)",
		"a5_1":              "A5.1 (construction-site waste)",
	}
	var out obj
	for _, p := range core.RangeParams {
		field, bound := p[:strings.LastIndexByte(p, '_')], "at least"
		if strings.HasSuffix(p, "_max") {
			bound = "at most"
		}
		out = append(out, kv{p, num(fmt.Sprintf("Keep only resources whose %s is %s this many kg CO2e per declared unit (inclusive); resources that do not publish it are left out. Combine with unit, since values are per declared unit.", names[field], bound))})
	}
	return out
}

var idDesc = "Resource id as returned by search_climate_data: prefixed catalog:id (e.g. national:6000000000, dkbr:#G0164; br25 is an alias of dkbr) or a bare id (6000000000), or a hit's details path (/api/resources/dkbr:%23G0164; percent-encoding is decoded). A bare id found in several catalogs is refused with the candidate prefixed ids."

var detailsInput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{
		{"id", obj{{"type", "string"}, {"minLength", 1}, {"maxLength", maxRefLen}, {"description", idDesc}}},
		{"lang", langProp(langShown)},
	}},
	{"required", []string{"id"}},
	{"additionalProperties", false},
})

var compareInput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{
		{"a", obj{{"type", "string"}, {"minLength", 1}, {"maxLength", maxRefLen}, {"description", "First resource. " + idDesc}}},
		{"b", obj{{"type", "string"}, {"minLength", 1}, {"maxLength", maxRefLen}, {"description", "Second resource, same forms as a. The answer's delta_a1a3 is a minus b."}}},
		{"unit", obj{
			{"type", "string"},
			{"description", "Optional shared unit to restate both in, e.g. kg, m3 (m³), m2 (m²), kWh, MJ. It must be each resource's declared unit or reachable through its conversions (get_resource_details shows them); otherwise the call fails naming the units each side allows. Omit it to let the service pick a shared unit; when there is none the answer is marked incomparable."},
		}},
		{"impact", obj{
			{"type", "string"},
			{"enum", []string{string(core.ImpactTypical), string(core.ImpactConservative), string(core.ImpactA4), string(core.ImpactA51)}},
			{"default", string(core.ImpactTypical)},
			{"description", "Which value to compare: typical (default; typical A1-A3 GWP-GHG), conservative (the conservative A1-A3 used in Swedish climate declarations, about 25% above typical), a4 (transport to site) or a5_1 (construction-site waste). a4 and a5_1 are not published for energy carriers."},
		}},
		{"lang", langProp(langShown)},
	}},
	{"required", []string{"a", "b"}},
	{"additionalProperties", false},
})

// --- Output schemas: the REST bodies, field for field. ---

// resourceProps are the properties of a Resource as /api/resources/{id}
// returns it.
func resourceProps() obj {
	return obj{
		{"id", str("Resource id within its catalog.")},
		{"catalog", obj{{"type", "string"}, {"enum", []string{string(core.National), string(core.DKBR), string(core.BR25)}}, {"description", "Catalog of the resource; with id it forms the prefixed id catalog:id."}}},
		{"name", str("Name in the language asked for (falling back to another language: name_lang says which).")},
		{"name_lang", obj{{"type", "string"}, {"enum", []string{"sv", "en", "da", "de"}}, {"description", "Language of name. It differs from the language asked for when that language has no name: lang=en on a Danish Tabel 7 row gives the Danish name and da."}}},
		{"description", str("Description in the language asked for (falling back to another language: description_lang says which).")},
		{"description_lang", obj{{"type", "string"}, {"enum", []string{"sv", "en", "da"}}, {"description", "Language of description."}}},
		{"name_sv", str("Swedish name.")},
		{"name_en", str("English name.")},
		{"name_da", str("Danish name (dkbr).")},
		{"name_de", str("German name (dkbr): the ÖKOBAUDAT product name of a Tabel 7 #G row (its column Navn DE/ENG). Never shown as the English name.")},
		{"description_sv", str("Swedish description.")},
		{"description_en", str("English description.")},
		{"description_da", str("Danish description (dkbr).")},
		{"applicability_sv", str("Swedish applicability text.")},
		{"applicability_en", str("English applicability text.")},
		{"synonyms", str("The publisher's Swedish search synonyms.")},
		{"synonyms_en", str("English search synonyms.")},
		{"a1a3", num("Typical GWP-GHG A1-A3 in kg CO2e per declared unit; the value comparisons use by default.")},
		{"a1a3_conservative", num("Conservative A1-A3 (about 25% above typical), used by the publisher for climate declarations.")},
		{"a4", num("GWP-GHG module A4 (transport to site); omitted when not published (energy carriers).")},
		{"a5_1", num("GWP-GHG module A5.1 (construction-site waste); omitted when not published (energy carriers).")},
		{"gwp_unit", str("Unit of the GWP values, shape kg CO2 eq./<unit>.")},
		{"conservative_factor", num("Factor from typical to conservative A1-A3.")},
		{"waste_factor", num("Construction-site waste factor.")},
		{"biogenic_carbon", num("Biogenic carbon content.")},
		{"service_life", str("Reference service life.")},
		{"transports", obj{
			{"type", "array"},
			{"description", "A4 transport legs, when published."},
			{"items", obj{
				{"type", "object"},
				{"properties", obj{
					{"name", str("Leg name.")},
					{"distance_km", num("Distance in km.")},
					{"type", str("Vehicle type.")},
					{"fuel", str("Fuel.")},
					{"fuel_resource_id", str("Id of the fuel's own resource.")},
				}},
				{"required", []string{"name", "distance_km"}},
			}},
		}},
		{"unit", str("Declared unit the values refer to, e.g. kg, m2, kWh.")},
		{"conversions", obj{
			{"type", "object"},
			{"additionalProperties", obj{{"type", "number"}}},
			{"description", "Factors restating the declared unit, keyed <unit>/<unit>, e.g. {\"kg/m³\": 700}."},
		}},
		{"category", str("Publisher's category in the catalog's language.")},
		{"category_en", str("Category in English.")},
		{"category_code", str("Publisher's category id (used in the product-sheet link).")},
		{"bk04", str("Swedish BK04 classification, when published.")},
		{"version", str("Release version of the data, e.g. 02.07.000.")},
		{"source", str("The data publisher to cite when using the values.")},
		{"origin", obj{{"type", "string"}, {"format", "uri"}, {"description", "The publisher's official product sheet (national catalog)."}}},
		{"withdrawn", boolean("True when the resource left the publisher's latest release (kept readable by id, not searchable).")},
	}
}

var resourceRequired = []string{"id", "catalog", "source"}

func resourceSchema(desc string) obj {
	return obj{
		{"type", "object"},
		{"description", desc},
		{"properties", resourceProps()},
		{"required", resourceRequired},
	}
}

func hitSchema() obj {
	props := append(resourceProps(),
		kv{"lang", obj{{"type", "string"}, {"enum", []string{string(core.Swedish), string(core.English)}}, {"description", "Language the hit is shown in."}}},
		kv{"score", num("Retrieval score (Reciprocal Rank Fusion of the full-text and vector lists); stays the retrieval score after reranking.")},
		kv{"match_source", obj{{"type", "string"}, {"enum", []string{string(core.MatchFTS), string(core.MatchVector), string(core.MatchBoth)}}, {"description", "How retrieval matched: fts (full text), vector, or both."}}},
		kv{"reranked", boolean("Present and true when a reranker reordered the results.")},
		kv{"rerank_score", num("Score the reranker gave the hit.")},
		kv{"details", str("REST path of the full resource, /api/resources/<catalog>:<id> with the id percent-encoded (/api/resources/dkbr:%23G0164), usable as it is; get_resource_details takes it as it is, or the catalog:id.")},
		kv{"highlight", obj{
			{"type", "object"},
			{"description", "Present when highlight was asked: the shown name and description, HTML-escaped, with the words the query matched in <mark>…</mark>."},
			{"properties", obj{
				{"name", str("The shown name with the matched words marked.")},
				{"description", str("The shown description with the matched words marked; omitted when there is none.")},
			}},
			{"required", []string{"name"}},
		}},
	)
	return obj{
		{"type", "object"},
		{"properties", props},
		{"required", append(append([]string(nil), resourceRequired...), "lang", "score", "match_source", "details")},
	}
}

var searchOutput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{
		{"source", str("Attribution to cite: the publishers of the catalogs searched.")},
		{"query", str("The query as searched (spaces normalised).")},
		{"lang", obj{{"type", "string"}, {"enum", []string{string(core.Swedish), string(core.English)}}, {"description", "Language of the query."}}},
		{"results", obj{{"type", "array"}, {"items", hitSchema()}, {"description", "Hits, best first (or in the sort asked for), from offset: each the full resource plus how it matched."}}},
		{"total", obj{{"type", "integer"}, {"minimum", 0}, {"description", "How many resources match (after the filters), before paging: results holds those from offset, at most limit."}}},
		{"took_ms", num("How long the answer took to compute, in milliseconds.")},
		{"facets", obj{
			{"type", "object"},
			{"description", "Present when facets was asked: for each facet asked (category, unit, catalog) its values with their counts over the whole match set, most frequent first."},
			{"additionalProperties", obj{
				{"type", "array"},
				{"items", obj{
					{"type", "object"},
					{"properties", obj{{"value", str("A category (in the language asked for), a declared unit or a catalog id.")}, {"count", obj{{"type", "integer"}, {"minimum", 1}, {"description", "How many matches hold the value."}}}}},
					{"required", []string{"value", "count"}},
				}},
			}},
		}},
		{"notes", obj{{"type", "array"}, {"items", obj{{"type", "string"}}}, {"description", "Why the answer is degraded or empty, e.g. vector search or reranking unavailable, or that nothing matched."}}},
	}},
	{"required", []string{"source", "query", "lang", "results", "total", "took_ms"}},
})

var detailsOutput = mustJSON(resourceSchema("A construction product or energy carrier with its climate impact. Optional values are omitted when the publisher does not publish them."))

var compareOutput = mustJSON(obj{
	{"type", "object"},
	{"properties", obj{
		{"source", str("Attribution to cite.")},
		{"a", resourceSchema("The first resource.")},
		{"b", resourceSchema("The second resource.")},
		{"unit", str("Shared unit both values are stated per; empty when incomparable.")},
		{"impact", obj{{"type", "string"}, {"enum", []string{string(core.ImpactTypical), string(core.ImpactConservative), string(core.ImpactA4), string(core.ImpactA51)}}, {"description", "Which value was compared."}}},
		{"value_a", num("a's value for the impact in kg CO2e per unit (0 when incomparable).")},
		{"value_b", num("b's value for the impact in kg CO2e per unit (0 when incomparable).")},
		{"delta_a1a3", num("value_a minus value_b per unit; negative means a has the lower impact (0 when incomparable).")},
		{"lower_impact_id", str("Id of the side with the lower value; empty when equal or incomparable.")},
		{"incomparable", boolean("True when the two cannot be restated in one unit (no unit was given and none is shared).")},
	}},
	{"required", []string{"source", "a", "b", "unit", "impact", "value_a", "value_b", "delta_a1a3", "lower_impact_id", "incomparable"}},
})
