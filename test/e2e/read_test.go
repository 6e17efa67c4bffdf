package e2e

import (
	"go.uber.org/fx"
	"io"

	"net/http"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// TestReadAPIOverTheRealCatalog ingests the real exports (02.06 sv merged
// with 02.07 en) and drives every read endpoint.
func TestReadAPIOverTheRealCatalog(t *testing.T) {
	e := newEnv(t, nil)
	res := e.mustIngest()
	// 223 shared ids + 7 en-only + 5 sv-only.
	if res.Origin != core.OriginJSON || res.Seen != 235 || res.Upserted != 235 || res.Skipped != 0 || res.Version != "02.07.000" {
		t.Fatalf("first ingest: %+v", res)
	}
	if got := e.Up.Versions(); len(got) == 0 || got[0] != "latest" {
		t.Fatalf("the service must ask for the latest release, asked %v", got)
	}

	t.Run("healthz", func(t *testing.T) {
		r := e.get("/healthz")
		if r.Status != 200 || !contains(string(r.Body), `"ok"`) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("openapi and docs", func(t *testing.T) {
		r := e.get("/openapi.yaml")
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/yaml" || !contains(string(r.Body), "openapi: 3.0.3") {
			t.Fatalf("%d %s", r.Status, r.Header.Get("Content-Type"))
		}
		r = e.get("/docs")
		if r.Status != 200 || !contains(string(r.Body), "swagger-ui") || contains(string(r.Body), "https://") {
			t.Fatalf("/docs: %d %.300s", r.Status, r.Body)
		}
		for _, asset := range []string{"/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"} {
			if r := e.get(asset); r.Status != 200 || len(r.Body) < 1000 {
				t.Fatalf("%s: %d", asset, r.Status)
			}
		}
	})
	t.Run("resource by id, every field mapped", func(t *testing.T) {
		var r core.Resource
		resp := e.get("/api/resources/6000000000")
		if resp.Status != 200 {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
		resp.json(t, &r)
		// Values of 02.07 en (the newer release), texts of both cultures.
		if r.ID != "6000000000" || r.Catalog != core.National || r.NameSV != "Spånskiva" || r.NameEN != "Particle board" || r.Name != "Spånskiva" {
			t.Fatalf("names: %+v", r)
		}
		if r.A1A3 == nil || *r.A1A3 != 0.39 || r.A1A3Conservative == nil || r.A4 == nil || r.A51 == nil || r.GWPUnit != "kg CO2 eq./kg" || r.Unit != "kg" {
			t.Fatalf("values: %+v", r)
		}
		if r.Conversions["kg/m³"] != 700 || r.Category != "Byggskivor" || r.CategoryEN != "Building boards" || r.Version != "02.07.000" {
			t.Fatalf("conversions/category/version: %+v", r)
		}
		if r.Origin != "https://klimatdatabasen.boverket.se/detaljer/10/6000000000" || r.Source == "" || len(r.Transports) == 0 || r.DescriptionSV == "" || r.DescriptionEN == "" {
			t.Fatalf("origin/source/transports/descriptions: %+v", r)
		}
		var en core.Resource
		e.get("/api/resources/national:6000000000?lang=en").json(t, &en)
		if en.Name != "Particle board" || en.ID != r.ID {
			t.Fatalf("lang=en shows the English name first: %+v", en.Name)
		}
	})
	t.Run("energy carrier omits A4 and A5.1", func(t *testing.T) {
		resp := e.get("/api/resources/6000000008")
		body := string(resp.Body)
		if resp.Status != 200 || contains(body, `"a4"`) || contains(body, `"a5_1"`) || contains(body, `"transports"`) || !contains(body, `"unit":"kWh"`) {
			t.Fatalf("%d %s", resp.Status, body)
		}
	})
	t.Run("unknown ids and catalogs", func(t *testing.T) {
		if r := e.get("/api/resources/999"); r.Status != 404 || !contains(r.errMsg(t), "999") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := e.get("/api/resources/dkbr:6000000000"); r.Status != 404 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := e.get("/api/resources/se:6000000000"); r.Status != 400 || !contains(r.errMsg(t), "unknown catalog") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := e.get("/api/resources/6000000000?lang=de"); r.Status != 400 || !contains(r.errMsg(t), "lang") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("origin", func(t *testing.T) {
		r := e.get("/api/resources/national:6000000000/origin")
		if r.Status != http.StatusFound || r.Header.Get("Location") != "https://klimatdatabasen.boverket.se/detaljer/10/6000000000" {
			t.Fatalf("%d %v", r.Status, r.Header)
		}
		if r := e.get("/api/resources/123/origin"); r.Status != 404 {
			t.Fatalf("%d", r.Status)
		}
	})
	t.Run("list", func(t *testing.T) {
		var l core.ListResponse
		r := e.get("/api/resources?databases=national&lang=en")
		r.json(t, &l)
		if r.Status != 200 || len(l.Resources) != 235 || l.Source == "" || !contains(l.Source, "Boverket") {
			t.Fatalf("%d %d %q", r.Status, len(l.Resources), l.Source)
		}
		var d core.ListResponse
		e.get("/api/resources?databases=br25").json(t, &d)
		if len(d.Resources) != 0 {
			t.Fatalf("dkbr is empty, got %d", len(d.Resources))
		}
		if r := e.get("/api/resources?databases=national,xx"); r.Status != 400 || !contains(r.errMsg(t), "xx") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("search", func(t *testing.T) {
		var s core.SearchResponse
		r := e.get("/api/search?q=" + q("spånskiva"))
		r.json(t, &s)
		if r.Status != 200 || len(s.Results) == 0 || s.Results[0].ID != "6000000000" || s.Lang != core.Swedish || s.Source == "" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		h := s.Results[0]
		if h.MatchSource != core.MatchFTS || h.Details != "/api/resources/national:6000000000" || h.Origin == "" || h.Score <= 0 || h.A1A3 == nil {
			t.Fatalf("hit: %+v", h)
		}
		e.get("/api/search?q="+q("particle board")+"&lang=en&databases=national").json(t, &s)
		if len(s.Results) == 0 || s.Results[0].ID != "6000000000" || s.Results[0].Name != "Particle board" || s.Results[0].Lang != core.English {
			t.Fatalf("english search: %+v", s.Results)
		}
		e.get("/api/search?q=betong&databases=dkbr").json(t, &s)
		if len(s.Results) != 0 {
			t.Fatalf("dkbr filter leaks national hits: %d", len(s.Results))
		}
		s = core.SearchResponse{} // the dkbr answer's "nothing matched" note must not carry over
		e.get("/api/search?q=betong&limit=3&vector=true").json(t, &s)
		if len(s.Results) != 3 || len(s.Notes) != 0 || s.Results[0].MatchSource != core.MatchBoth {
			t.Fatalf("limit 3 with vector=true (hash embedder): %+v, notes %v", s.Results, s.Notes)
		}
		for _, tc := range []struct{ path, want string }{
			{"/api/search", "q is required"},
			{"/api/search?q=%20%20", "q is required"},
			{"/api/search?q=" + strings.Repeat("a", 257), "limit is 256"},
			{"/api/search?q=x&lang=fr", "lang"},
			{"/api/search?q=x&databases=foo", "foo"},
			{"/api/search?q=x&vector=maybe", "vector"},
			{"/api/search?q=x&limit=0", "limit"},
			{"/api/search?q=x&limit=101", "limit"},
			{"/api/search?q=x&offset=-1", "offset"},
			{"/api/search?q=x&lnag=en", "unknown query parameter"},
		} {
			r := e.get(tc.path)
			if r.Status != 400 || !contains(r.errMsg(t), tc.want) {
				t.Errorf("%s: %d %s (want 400 containing %q)", tc.path, r.Status, r.Body, tc.want)
			}
		}
	})
	t.Run("compare", func(t *testing.T) {
		var c core.Comparison
		// Particle board (kg, 700 kg/m³) vs glulam 6000000168 (kg): shared declared unit kg.
		r := e.get("/api/resources/compare?a=6000000000&b=national:6000000168")
		r.json(t, &c)
		if r.Status != 200 || c.Unit != "kg" || c.Incomparable || c.A.ID != "6000000000" || c.B.ID != "6000000168" || c.Source == "" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if c.DeltaA1A3 != round(*c.A.A1A3-*c.B.A1A3) || (c.LowerImpactID != "6000000000" && c.LowerImpactID != "6000000168") {
			t.Fatalf("delta/lower: %+v", c)
		}
		r = e.get("/api/resources/compare?a=6000000000&b=6000000168&unit=m3")
		r.json(t, &c)
		if r.Status != 200 || c.Unit != "m³" || c.ValueA != round(0.39*700) {
			t.Fatalf("restated in m³: %d %s", r.Status, r.Body)
		}
		// Electricity (kWh) vs particle board (kg): nothing shared.
		e.get("/api/resources/compare?a=6000000008&b=6000000000").json(t, &c)
		if !c.Incomparable || c.Unit != "" || c.LowerImpactID != "" {
			t.Fatalf("incomparable: %+v", c)
		}
		for _, tc := range []struct{ path, want string }{
			{"/api/resources/compare?a=6000000008&b=6000000000&unit=m3", "cannot apply to a"},
			{"/api/resources/compare?a=6000000000&b=6000000008&unit=m3", "cannot apply to b"},
			{"/api/resources/compare?a=6000000000&b=6000000008&impact=a4", "b (national:6000000008) does not publish a4"},
			{"/api/resources/compare?a=6000000000&b=6000000008&impact=worst", "impact"},
			{"/api/resources/compare?a=6000000000", "both a and b"},
		} {
			r := e.get(tc.path)
			if r.Status != 400 || !contains(r.errMsg(t), tc.want) {
				t.Errorf("%s: %d %s (want 400 containing %q)", tc.path, r.Status, r.Body, tc.want)
			}
		}
		if r := e.get("/api/resources/compare?a=6000000000&b=42"); r.Status != 404 || !contains(r.errMsg(t), "b:") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("unknown route", func(t *testing.T) {
		if r := e.get("/api/nothing"); r.Status != 404 || r.errMsg(t) == "" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func round(v float64) float64 {
	// Same 12-significant-digit rounding the service applies.
	return float64(int64(v*1e9+0.5)) / 1e9
}

func TestHealthReportsAnUnreadableStore(t *testing.T) {
	var st ports.ResourceStore
	e := newEnv(t, nil, fx.Populate(&st))
	if r := e.get("/healthz"); r.Status != 200 {
		t.Fatalf("%d", r.Status)
	}
	if err := st.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	r := e.get("/healthz")
	var h core.Health
	r.json(t, &h)
	if r.Status != http.StatusServiceUnavailable || h.Status != "unhealthy" || h.Error == "" {
		t.Fatalf("closed store: %d %s", r.Status, r.Body)
	}
	// Reads fail cleanly too, with an Error body rather than a crash.
	if r := e.get("/api/resources/6000000000"); r.Status != http.StatusServiceUnavailable || r.errMsg(t) == "" {
		t.Fatalf("read on a closed store: %d %s", r.Status, r.Body)
	}
}
