package mcpe2e

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/climatesearch/climatesearch/core"
)

func (c *conn) read(t *testing.T, uri string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.cli.ReadResource(ctx, req)
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || tc.MIMEType != "application/json" || tc.URI != uri {
		t.Fatalf("%s: contents %+v", uri, res.Contents[0])
	}
	return tc.Text, nil
}

func (c *conn) complete(t *testing.T, ref any, arg, value string, context map[string]string) mcp.Completion {
	t.Helper()
	ctx, cancel := contextWithPatience()
	defer cancel()
	req := mcp.CompleteRequest{}
	req.Params.Ref = ref
	req.Params.Argument = mcp.CompleteArgument{Name: arg, Value: value}
	req.Params.Context = mcp.CompleteContext{Arguments: context}
	res, err := c.cli.Complete(ctx, req)
	if err != nil {
		t.Fatalf("%s: complete %s=%q: %v", c.name, arg, value, err)
	}
	return res.Completion
}

func contextWithPatience() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), patience)
}

// TestResourcesPromptsAndCompletions: the catalogs and every resource are
// readable by URI and equal the REST answers; the two prompts come with
// their instructions; completions offer the live catalogs' ids, units and
// categories. Over every transport.
func TestResourcesPromptsAndCompletions(t *testing.T) {
	e := newEnv(t, nil)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			c := e.connect(t, kind)
			ctx, cancel := contextWithPatience()
			defer cancel()

			rl, err := c.cli.ListResources(ctx, mcp.ListResourcesRequest{})
			if err != nil || len(rl.Resources) != 1 || rl.Resources[0].URI != "climate://catalogs" || rl.Resources[0].Description == "" {
				t.Fatalf("resources/list: %+v, %v", rl, err)
			}
			tl, err := c.cli.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate == nil || tl.ResourceTemplates[0].URITemplate.Raw() != "climate://{catalog}/{id}" {
				t.Fatalf("resources/templates/list: %+v, %v", tl, err)
			}

			got := e.equalsREST(t, "climate://catalogs", "/api/catalogs", func() []byte {
				text, err := c.read(t, "climate://catalogs")
				if err != nil {
					t.Fatal(err)
				}
				return []byte(text)
			})
			var list core.CatalogList
			if err := json.Unmarshal(got, &list); err != nil || len(list.Catalogs) != 2 {
				t.Fatalf("climate://catalogs: %s", got)
			}
			for _, ref := range []string{"national:6000000032", "dkbr:#G0164", "br25:#G0164", "national:6000000000"} {
				cat, id, _ := strings.Cut(ref, ":")
				uri := "climate://" + cat + "/" + url.PathEscape(id)
				got := e.equalsREST(t, uri, "/api/resources/"+url.PathEscape(ref), func() []byte {
					text, err := c.read(t, uri)
					if err != nil {
						t.Fatalf("%s: %v", uri, err)
					}
					return []byte(text)
				})
				var r core.Resource
				if err := json.Unmarshal(got, &r); err != nil || r.ID != id || r.Source == "" {
					t.Errorf("%s: %s", uri, got)
				}
				if r.Catalog == core.National && !strings.HasPrefix(r.Origin, "https://") {
					t.Errorf("%s: no product sheet link: %q", uri, r.Origin)
				}
			}
			if _, err := c.read(t, "climate://national/1"); err == nil || !strings.Contains(err.Error(), "no resource") {
				t.Errorf("an unknown resource: %v", err)
			}

			pl, err := c.cli.ListPrompts(ctx, mcp.ListPromptsRequest{})
			if err != nil || len(pl.Prompts) != 2 {
				t.Fatalf("prompts/list: %+v, %v", pl, err)
			}
			for _, p := range []struct {
				name string
				args map[string]string
				want []string
			}{
				{"find_lower_carbon_alternative", map[string]string{"material": "national:6000000032", "unit": "m³"}, []string{"national:6000000032", "find_alternatives", `unit "m³"`, "source"}},
				{"compare_per_square_metre", map[string]string{"a": "spånskiva", "b": "national:6000000168"}, []string{"spånskiva", "national:6000000168", "compare_resources", `unit "m2"`, "do not invent"}},
			} {
				req := mcp.GetPromptRequest{}
				req.Params.Name = p.name
				req.Params.Arguments = p.args
				res, err := c.cli.GetPrompt(ctx, req)
				if err != nil || len(res.Messages) != 1 {
					t.Fatalf("%s: %+v, %v", p.name, res, err)
				}
				text := res.Messages[0].Content.(mcp.TextContent).Text
				for _, w := range p.want {
					if !strings.Contains(text, w) {
						t.Errorf("%s: the prompt lacks %q:\n%s", p.name, w, text)
					}
				}
				req.Params.Arguments = map[string]string{}
				if _, err := c.cli.GetPrompt(ctx, req); err == nil {
					t.Errorf("%s without its required argument answered", p.name)
				}
			}

			alt := mcp.PromptReference{Type: "ref/prompt", Name: "find_lower_carbon_alternative"}
			if got := c.complete(t, alt, "material", "national:600000003", nil); !slices.Contains(got.Values, "national:6000000032") || got.Total != len(got.Values) {
				t.Errorf("material completions: %+v", got)
			}
			if got := c.complete(t, alt, "unit", "m", nil); !slices.Contains(got.Values, "m²") || !slices.Contains(got.Values, "m³") || slices.Contains(got.Values, "kg") {
				t.Errorf("unit completions: %+v", got)
			}
			if got := c.complete(t, alt, "category", "bet", nil); !slices.Contains(got.Values, "Betong") {
				t.Errorf("category completions: %+v", got)
			}
			tmpl := mcp.ResourceReference{Type: "ref/resource", URI: "climate://{catalog}/{id}"}
			if got := c.complete(t, tmpl, "catalog", "", nil); !slices.Equal(got.Values, []string{"br25", "dkbr", "national"}) {
				t.Errorf("catalog completions: %+v", got)
			}
			if got := c.complete(t, tmpl, "id", "#g", map[string]string{"catalog": "br25"}); !slices.Equal(got.Values, []string{"#G0164"}) {
				t.Errorf("dkbr id completions: %+v", got)
			}
			if got := c.complete(t, tmpl, "id", "", map[string]string{"catalog": "national"}); len(got.Values) != 100 || got.Total != 235 || !got.HasMore {
				t.Errorf("national id completions: %d values, total %d, more %v", len(got.Values), got.Total, got.HasMore)
			}
		})
	}
}
