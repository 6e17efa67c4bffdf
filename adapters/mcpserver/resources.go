package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/climatesearch/climatesearch/core"
)

// MCP resources, prompts and completions: the catalogs and every resource
// readable by URI, the two jobs agents are asked most as prompts, and
// completions of their arguments from the live catalogs.
const (
	URICatalogs       = "climate://catalogs"
	URITemplate       = "climate://{catalog}/{id}"
	PromptAlternative = "find_lower_carbon_alternative"
	PromptCompareM2   = "compare_per_square_metre"
	// maxCompletions is the protocol's cap on completion values.
	maxCompletions = 100
)

func (s *Server) addResources() {
	s.mcp.AddResource(mcp.NewResource(URICatalogs, "catalogs",
		mcp.WithResourceDescription("Every catalog this service holds: publisher, source to cite, dataset version (and whether it is the demo snapshot), live and withdrawn counts, last and next ingest, vector coverage. The list_catalogs answer as JSON."),
		mcp.WithMIMEType("application/json"),
	), s.readCatalogs)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(URITemplate, "resource",
		mcp.WithTemplateDescription("One construction product or energy carrier as JSON, the get_resource_details answer: climate values, unit, conversions, the source to cite and, for national resources, origin, the publisher's product sheet. catalog is national or dkbr (alias br25); id is percent-encoded (dkbr/%23G0164)."),
		mcp.WithTemplateMIMEType("application/json"),
	), s.readResource)

	s.mcp.AddPrompt(mcp.NewPrompt(PromptAlternative,
		mcp.WithPromptTitle("Find a lower-carbon alternative"),
		mcp.WithPromptDescription("Find what could replace a construction product with a lower climate impact, with values in one unit and the source cited."),
		mcp.WithArgument("material", mcp.RequiredArgument(),
			mcp.ArgumentDescription("The product to replace: a catalog:id (national:6000000032) or words to search for (\"betong C30/37\", \"aluminium profile\"). Completes to resource ids.")),
		mcp.WithArgument("unit", mcp.ArgumentDescription("Optional unit to compare in (kg, m³, m²); the product's declared unit when omitted. Completes to the catalogs' units.")),
		mcp.WithArgument("category", mcp.ArgumentDescription("Optional category to stay in when searching (\"Betong\", \"Isolering\"). Completes to the catalogs' categories.")),
	), s.promptAlternative)
	s.mcp.AddPrompt(mcp.NewPrompt(PromptCompareM2,
		mcp.WithPromptTitle("Compare two materials per square metre"),
		mcp.WithPromptDescription("Compare the climate impact of two materials per square metre of building element, restated through the published conversions, with the source cited."),
		mcp.WithArgument("a", mcp.RequiredArgument(), mcp.ArgumentDescription("First material: a catalog:id or words to search for. Completes to resource ids.")),
		mcp.WithArgument("b", mcp.RequiredArgument(), mcp.ArgumentDescription("Second material: a catalog:id or words to search for. Completes to resource ids.")),
	), s.promptCompare)
}

func (s *Server) readCatalogs(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	list, err := s.d.Catalogs.CatalogList(ctx)
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, list)
}

// readResource answers climate://{catalog}/{id} with the resource as
// get_resource_details returns it.
func (s *Server) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	rest, ok := strings.CutPrefix(req.Params.URI, "climate://")
	cat, rawID, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || cat == "" || rawID == "" {
		return nil, fmt.Errorf("resource URI %q: want climate://{catalog}/{id}, e.g. climate://national/6000000032", req.Params.URI)
	}
	id, err := url.PathUnescape(rawID)
	if err != nil {
		return nil, fmt.Errorf("resource URI %q: the id is not percent-encoded correctly", req.Params.URI)
	}
	r, err := s.d.Resources.Get(ctx, cat+":"+id, core.Swedish)
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, r)
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

func (s *Server) promptAlternative(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	a := req.Params.Arguments
	material := strings.TrimSpace(a["material"])
	if material == "" {
		return nil, fmt.Errorf("material is required: a catalog:id such as national:6000000032, or words such as \"betong C30/37\"")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Find a lower-carbon alternative to %s.\n\n", material)
	b.WriteString("1. If that is not a catalog:id, find the product with search_climate_data (Swedish, English and Danish text is searchable)")
	if c := strings.TrimSpace(a["category"]); c != "" {
		fmt.Fprintf(&b, ", with category %q", c)
	}
	b.WriteString(", and pick the hit that is the product meant; ask the user when several fit.\n")
	b.WriteString("2. Call find_alternatives with its id")
	if u := strings.TrimSpace(a["unit"]); u != "" {
		fmt.Fprintf(&b, " and unit %q", u)
	}
	b.WriteString(". Siblings (a variant of the same product, such as the climate-improved concrete of the same strength class) come first; the others share its category, BK04 class or name.\n")
	b.WriteString("3. Answer with the product's value and the best alternatives in the same unit, each with its saving in kg CO2e and percent and why it is comparable; say so plainly when nothing lower exists, and mention what the notes say was left out.\n")
	b.WriteString("4. Cite the answer's source, and link each national resource's origin (the publisher's product sheet).")
	return mcp.NewGetPromptResult("Find a lower-carbon alternative to "+material,
		[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(b.String()))}), nil
}

func (s *Server) promptCompare(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	a, b := strings.TrimSpace(req.Params.Arguments["a"]), strings.TrimSpace(req.Params.Arguments["b"])
	if a == "" || b == "" {
		return nil, fmt.Errorf("a and b are required: catalog:ids such as national:6000000000, or words such as \"spånskiva\"")
	}
	var t strings.Builder
	fmt.Fprintf(&t, "Compare the climate impact of %s and %s per square metre (m²).\n\n", a, b)
	t.WriteString("1. Find each with search_climate_data unless it is already a catalog:id, and pick the hit meant; ask the user when several fit.\n")
	t.WriteString("2. Call compare_resources with both ids and unit \"m2\". It restates both through their published conversions (for example kg/m²).\n")
	t.WriteString("3. If it refuses m² for a side, that side publishes no per-m² conversion: do not invent one. Say so, show the units each side can be stated in (the error names them), and offer to compare per another shared unit, or per m² for a thickness the user gives (density × thickness, with the density from the resource's kg/m³ conversion), stating that assumption.\n")
	t.WriteString("4. Answer with both values per m², the difference and which is lower, and cite the source.")
	return mcp.NewGetPromptResult("Compare "+a+" and "+b+" per m²",
		[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(t.String()))}), nil
}

// completions answers completion/complete for the prompts' and the
// template's arguments from the live catalogs: resource ids (prefixed),
// units, categories and catalog ids, by prefix, ignoring case. Unknown
// prompts and arguments complete to nothing.
type completions struct{ s *Server }

func (c completions) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	switch {
	case prompt == PromptAlternative && arg.Name == "material", prompt == PromptCompareM2 && (arg.Name == "a" || arg.Name == "b"):
		return c.values(ctx, arg.Value, "", func(r *core.Resource) []string { return []string{r.Ref()} })
	case prompt == PromptAlternative && arg.Name == "unit":
		return c.values(ctx, arg.Value, "", func(r *core.Resource) []string { return []string{r.Unit} })
	case prompt == PromptAlternative && arg.Name == "category":
		return c.values(ctx, arg.Value, "", func(r *core.Resource) []string { return []string{r.Category, r.CategoryEN} })
	}
	return &mcp.Completion{Values: []string{}}, nil
}

func (c completions) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, mc mcp.CompleteContext) (*mcp.Completion, error) {
	if uri != URITemplate {
		return &mcp.Completion{Values: []string{}}, nil
	}
	switch arg.Name {
	case "catalog":
		return complete(arg.Value, []string{string(core.National), string(core.DKBR), string(core.BR25)}), nil
	case "id":
		cat := ""
		if v := mc.Arguments["catalog"]; v != "" {
			id, err := core.ParseCatalog(v)
			if err != nil {
				return &mcp.Completion{Values: []string{}}, nil
			}
			cat = string(id)
		}
		return c.values(ctx, arg.Value, core.CatalogID(cat), func(r *core.Resource) []string { return []string{r.ID} })
	}
	return &mcp.Completion{Values: []string{}}, nil
}

// values completes prefix over one field of every live resource (of one
// catalog, or all).
func (c completions) values(ctx context.Context, prefix string, cat core.CatalogID, field func(*core.Resource) []string) (*mcp.Completion, error) {
	cats := core.Catalogs
	if cat != "" {
		cats = []core.CatalogID{cat}
	}
	list, err := c.s.d.Resources.List(ctx, core.ListRequest{Catalogs: cats, Lang: core.Swedish})
	if err != nil {
		return nil, err
	}
	var all []string
	for i := range list.Resources {
		all = append(all, field(&list.Resources[i])...)
	}
	return complete(prefix, all), nil
}

// complete returns the distinct values starting with prefix (ignoring
// case), sorted, at most maxCompletions, with the total.
func complete(prefix string, all []string) *mcp.Completion {
	p := strings.ToLower(strings.TrimSpace(prefix))
	seen := map[string]bool{}
	out := []string{}
	for _, v := range all {
		if v == "" || seen[v] || !strings.HasPrefix(strings.ToLower(v), p) {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	sort.Strings(out)
	total := len(out)
	if len(out) > maxCompletions {
		out = out[:maxCompletions]
	}
	return &mcp.Completion{Values: out, Total: total, HasMore: total > len(out)}
}

// serverOptions are the capabilities resources, prompts and completions
// add to the server.
func (s *Server) resourceOptions() []server.ServerOption {
	c := completions{s}
	return []server.ServerOption{
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(c),
		server.WithResourceCompletionProvider(c),
	}
}
