package mcpe2e

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// TestDiscoveryAnswersEqualREST: find_alternatives answers what
// GET /api/resources/{id}/alternatives answers, and list_catalogs what
// GET /api/catalogs answers, field for field, over every transport, on the
// real national release; and the answers are the ones a consultant needs
// (the climate-improved sibling of a C30/37 concrete first).
func TestDiscoveryAnswersEqualREST(t *testing.T) {
	e := newEnv(t, nil)
	type ask struct {
		id    string
		query url.Values
		args  map[string]any
	}
	asks := []ask{
		{"national:6000000032", url.Values{}, map[string]any{}},
		{"national:6000000032", url.Values{"unit": {"m3"}, "lang": {"en"}, "limit": {"3"}}, map[string]any{"unit": "m3", "lang": "en", "limit": 3}},
		{"national:6000000159", url.Values{"impact": {"conservative"}}, map[string]any{"impact": "conservative"}},
		{"national:6000000000", url.Values{"databases": {"national,dkbr"}}, map[string]any{"databases": []string{"national", "dkbr"}}},
		{"dkbr:#G0164", url.Values{"databases": {"dkbr,national"}}, map[string]any{"databases": []string{"dkbr", "national"}}},
	}
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			c := e.connect(t, kind)
			for _, a := range asks {
				path := "/api/resources/" + url.PathEscape(a.id) + "/alternatives"
				if len(a.query) > 0 {
					path += "?" + a.query.Encode()
				}
				args := map[string]any{"id": a.id}
				for k, v := range a.args {
					args[k] = v
				}
				got := e.equalsREST(t, path, path, func() []byte {
					return structured(t, c.call(t, "find_alternatives", args))
				})
				var alt core.Alternatives
				if err := json.Unmarshal(got, &alt); err != nil {
					t.Fatal(err)
				}
				if alt.Resource.Ref() != strings.Replace(a.id, "br25", "dkbr", 1) || alt.Source == "" || alt.Unit == "" {
					t.Errorf("%s: resource %s, source %q, unit %q", path, alt.Resource.Ref(), alt.Source, alt.Unit)
				}
				if a.id == "national:6000000032" && (len(alt.Alternatives) == 0 || alt.Alternatives[0].ID != "6000000033") {
					t.Errorf("%s: the climate-improved C30/37 (6000000033) should come first, got %v", path, alt.Alternatives)
				}
			}
			got := e.equalsREST(t, "catalogs", "/api/catalogs", func() []byte {
				return structured(t, c.call(t, "list_catalogs", map[string]any{}))
			})
			var list core.CatalogList
			if err := json.Unmarshal(got, &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Catalogs) != 2 || list.Catalogs[0].ID != core.National || list.Catalogs[0].Live != 235 ||
				list.Catalogs[0].LastOrigin != core.OriginJSON || list.Catalogs[0].Demo || list.Catalogs[0].Version == "" ||
				list.Catalogs[1].ID != core.DKBR || list.Catalogs[1].Live != 2 || len(list.Catalogs[1].Aliases) != 1 {
				t.Errorf("catalogs: %+v", list.Catalogs)
			}
		})
	}
}
