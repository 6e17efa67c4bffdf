package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

func typical(r map[string]any) (map[string]any, bool) {
	items, _ := r["DataItems"].([]any)
	for _, it := range items {
		vals, _ := it.(map[string]any)["DataValueItems"].([]any)
		for _, v := range vals {
			m := v.(map[string]any)
			if m["DataModuleCode"] == "A1-A3 Typical" {
				return m, true
			}
		}
	}
	return nil, false
}

func listIDs(t *testing.T, e *env, query string) map[string]core.Resource {
	t.Helper()
	var l core.ListResponse
	r := e.get("/api/resources?databases=national" + query)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	r.json(t, &l)
	out := map[string]core.Resource{}
	for _, x := range l.Resources {
		out[x.ID] = x
	}
	return out
}

func TestSameReleaseTwiceUpsertsNothing(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	if n := len(e.Events.ofType(core.EventCatalogChanged)); n != 1 {
		t.Fatalf("first ingest: %d catalog.changed events, want 1", n)
	}
	res := e.mustIngest()
	if res.Upserted != 0 || res.Unchanged != 235 || res.Skipped != 235 || res.Withdrawn != 0 || len(res.Changed) != 0 {
		t.Fatalf("same release again: %+v", res)
	}
	if n := len(e.Events.ofType(core.EventCatalogChanged)); n != 1 {
		t.Fatalf("an unchanged release must not publish catalog.changed (now %d)", n)
	}
}

// serveChangedRelease makes the publisher serve the next release, which
// changes one value (A1-A3 of 6000000024 becomes 9.99) in both cultures;
// its versions are 02.06.001 (sv) and 02.07.001 (en).
func (e *env) serveChangedRelease() {
	t := e.t
	t.Helper()
	bump := func(rs []map[string]any) []map[string]any {
		for _, r := range rs {
			if boverkettest.ResourceID(r) == "6000000024" {
				v, _ := typical(r)
				v["Value"] = 9.99
			}
		}
		return rs
	}
	e.Up.SetJSON("sv", boverkettest.MutateExport(t, sv0206, bump, "02.06.001"))
	e.Up.SetJSON("en", boverkettest.MutateExport(t, en0207, bump, "02.07.001"))
}

func TestChangedReleaseReportsTheChangedIDs(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	e.serveChangedRelease()
	res := e.mustIngest()
	if res.Upserted != 1 || res.Unchanged != 234 || len(res.Changed) != 1 || res.Changed[0] != "national:6000000024" || res.Version != "02.07.001" {
		t.Fatalf("changed release: %+v", res)
	}
	evs := e.Events.ofType(core.EventCatalogChanged)
	if len(evs) != 2 || len(evs[1].Changes) != 1 || evs[1].Changes[0].Ref != "national:6000000024" || evs[1].ChangesOmitted != 0 {
		t.Fatalf("catalog.changed events: %+v", evs)
	}
	var r core.Resource
	e.get("/api/resources/6000000024").json(t, &r)
	if *r.A1A3 != 9.99 || r.Version != "02.07.001" {
		t.Fatalf("changed resource: a1a3 %v version %s", *r.A1A3, r.Version)
	}
}

func TestVersionOnlyBumpIsNotAChange(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	same := func(rs []map[string]any) []map[string]any { return rs }
	e.Up.SetJSON("sv", boverkettest.MutateExport(t, sv0206, same, "02.06.005"))
	e.Up.SetJSON("en", boverkettest.MutateExport(t, en0207, same, "02.07.005"))
	res := e.mustIngest()
	if res.Upserted != 0 || res.Unchanged != 235 || res.Version != "02.07.005" {
		t.Fatalf("version-only bump: %+v", res)
	}
	var r core.Resource
	e.get("/api/resources/6000000000").json(t, &r)
	if r.Version != "02.07.005" {
		t.Fatalf("the version is still updated: %s", r.Version)
	}
	if n := len(e.Events.ofType(core.EventCatalogChanged)); n != 1 {
		t.Fatalf("a version bump must not publish catalog.changed (%d events)", n)
	}
}

func TestVanishedResourcesAreWithdrawnNotDeleted(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	drop := func(rs []map[string]any) []map[string]any {
		out := rs[:0]
		for _, r := range rs {
			if boverkettest.ResourceID(r) != "6000000168" {
				out = append(out, r)
			}
		}
		return out
	}
	e.Up.SetJSON("sv", boverkettest.MutateExport(t, sv0206, drop, ""))
	e.Up.SetJSON("en", boverkettest.MutateExport(t, en0207, drop, ""))
	res := e.mustIngest()
	if res.Withdrawn != 1 || res.Seen != 234 || res.Upserted != 0 {
		t.Fatalf("withdrawal: %+v", res)
	}
	var r core.Resource
	resp := e.get("/api/resources/6000000168")
	resp.json(t, &r)
	if resp.Status != 200 || !r.Withdrawn || !strings.HasPrefix(r.NameSV, "Limträ") {
		t.Fatalf("a withdrawn resource stays readable by id: %d %s", resp.Status, resp.Body)
	}
	if _, listed := listIDs(t, e, "")["6000000168"]; listed {
		t.Fatal("a withdrawn resource is not listed")
	}
	var s core.SearchResponse
	e.get("/api/search?q="+q("limträ")).json(t, &s)
	for _, h := range s.Results {
		if h.ID == "6000000168" {
			t.Fatal("a withdrawn resource is not searchable")
		}
	}
	// A second ingest of the same release withdraws nothing new.
	if res := e.mustIngest(); res.Withdrawn != 0 {
		t.Fatalf("withdrawn twice: %+v", res)
	}
	// Back in the next release: live again.
	e.Up.SetJSON("sv", sv0206)
	e.Up.SetJSON("en", en0207)
	res = e.mustIngest()
	if res.Upserted != 1 || res.Changed[0] != "national:6000000168" {
		t.Fatalf("return: %+v", res)
	}
	e.get("/api/search?q="+q("limträ")).json(t, &s)
	if len(s.Results) == 0 || s.Results[0].ID != "6000000168" {
		t.Fatalf("back in search: %+v", s.Results)
	}
}

func TestExcelFallbackWhenTheJSONFails(t *testing.T) {
	for _, mode := range []string{"status", "unparsable", "empty"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, nil)
			switch mode {
			case "status":
				e.Up.FailJSON(http.StatusInternalServerError)
			case "unparsable":
				e.Up.SetJSON("sv", []byte("<html>maintenance</html>"))
			case "empty":
				e.Up.SetJSON("sv", []byte(`{"Version":"02.06.000","Culture":"sv-se","Categories":[],"Resources":[]}`))
			}
			res := e.mustIngest()
			if res.Origin != core.OriginExcel || res.Upserted != 235 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "boverket-json") {
				t.Fatalf("excel fallback: %+v", res)
			}
			var r core.Resource
			e.get("/api/resources/6000000000").json(t, &r)
			if r.A1A3 == nil || *r.A1A3 != 0.39 || r.NameSV != "Spånskiva" || r.NameEN != "Particle board" || r.Conversions["kg/m³"] != 700 {
				t.Fatalf("excel values: %+v", r)
			}
		})
	}
}

func TestUpstreamDownOnAnEmptyStoreLoadsTheDemoSnapshot(t *testing.T) {
	var st ports.ResourceStore
	e := newEnv(t, nil, fx.Populate(&st))
	e.Up.FailJSON(http.StatusServiceUnavailable)
	e.Up.FailExcel(http.StatusServiceUnavailable)
	res := e.mustIngest()
	// The whole current release (02.07.000), not a sample.
	if res.Origin != core.OriginFixture || res.Upserted != 230 || len(res.Errors) != 2 {
		t.Fatalf("fixture: %+v", res)
	}
	demoMeta := func() core.CatalogMeta {
		t.Helper()
		m, err := st.Meta(t.Context(), core.National)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// The catalog's metadata says it serves the demo snapshot, and keeps
	// saying so when a batch only adds to it.
	if m := demoMeta(); m.DemoSnapshot != "demo-02.07.000" || m.Version != "demo-02.07.000" {
		t.Fatalf("meta after the demo load: %+v", m)
	}
	if r := e.do(http.MethodPost, "/admin/resources", []byte(`{"catalog":"national","resources":[{"id":"9900000001","name":"Provbit","a1a3":1,"unit":"kg"}]}`), nil); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if m := demoMeta(); m.DemoSnapshot != "demo-02.07.000" {
		t.Fatalf("a batch over the demo snapshot cleared its mark: %+v", m)
	}
	// Answers for any resource of the catalog, by id and by search.
	var notSampled core.Resource
	e.get("/api/resources/national:6100000008?lang=en").json(t, &notSampled)
	if notSampled.NameEN == "" || notSampled.A1A3 == nil {
		t.Fatalf("national:6100000008 from the snapshot: %+v", notSampled)
	}
	if n := len(e.Events.ofType(core.EventCatalogUnreachable)); n != 1 {
		t.Fatalf("catalog.unreachable events: %d", n)
	}
	ids := listIDs(t, e, "")
	if len(ids) != res.Upserted+1 {
		t.Fatalf("listed %d, loaded %d and one batch row", len(ids), res.Upserted)
	}
	for _, r := range ids {
		if r.DescriptionSV != "" || r.DescriptionEN != "" || r.ApplicabilitySV != "" || r.A1A3 == nil {
			t.Fatalf("the snapshot holds facts only: %+v", r)
		}
	}
	// The snapshot never overwrites real data: once the publisher is back,
	// its release replaces the snapshot, and a later outage keeps it.
	e.Up.FailJSON(0)
	e.Up.FailExcel(0)
	if res := e.mustIngest(); res.Origin != core.OriginJSON {
		t.Fatalf("recovery: %+v", res)
	}
	if m := demoMeta(); m.DemoSnapshot != "" || m.Version != "02.07.000" {
		t.Fatalf("meta after the publisher's release: %+v", m)
	}
	e.Up.FailJSON(http.StatusServiceUnavailable)
	e.Up.FailExcel(http.StatusServiceUnavailable)
	_, resp := e.ingest()
	if resp.Status != http.StatusBadGateway || !contains(resp.errMsg(t), "stored data was kept") {
		t.Fatalf("outage on a full store: %d %s", resp.Status, resp.Body)
	}
	if m := demoMeta(); m.DemoSnapshot != "" {
		t.Fatalf("an outage on real data marked it as the demo snapshot: %+v", m)
	}
	if got := len(listIDs(t, e, "")); got != 235 {
		t.Fatalf("real data kept: %d resources", got)
	}
}

func TestAdminTokenGuardsAdminEndpoints(t *testing.T) {
	e := newEnv(t, map[string]string{"SERVICE_ADMIN_TOKEN": "s3cret"})
	batch := []byte(`{"catalog":"dkbr","resources":[{"id":"#D0001","name":"Beton","a1a3":0.1,"unit":"kg"}]}`)
	for _, h := range []map[string]string{nil, {"X-Admin-Token": "wrong"}, {"X-Admin-Token": "s3cre"}} {
		for _, path := range []string{"/admin/ingest/run?catalog=national", "/admin/resources"} {
			r := e.do(http.MethodPost, path, batch, h)
			if r.Status != http.StatusUnauthorized || !contains(r.errMsg(t), "X-Admin-Token") {
				t.Fatalf("%s with %v: %d %s", path, h, r.Status, r.Body)
			}
		}
	}
	if r := e.get("/api/resources/dkbr:%23D0001"); r.Status != 404 {
		t.Fatalf("a refused batch stores nothing: %d", r.Status)
	}
	ok := map[string]string{"X-Admin-Token": "s3cret"}
	if r := e.do(http.MethodPost, "/admin/resources", batch, ok); r.Status != 200 {
		t.Fatalf("right token: %d %s", r.Status, r.Body)
	}
	if r := e.do(http.MethodPost, "/admin/ingest/run?catalog=national", nil, ok); r.Status != 200 {
		t.Fatalf("right token: %d %s", r.Status, r.Body)
	}
	// Reads stay public.
	if r := e.get("/api/resources/dkbr:%23D0001"); r.Status != 200 {
		t.Fatalf("read: %d %s", r.Status, r.Body)
	}
}

func TestResourceBatch(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	post := func(body string) response {
		return e.do(http.MethodPost, "/admin/resources", []byte(body), nil)
	}
	r := post(`{"catalog":"br25","version":"BR25","resources":[
		{"id":"#G0164","name":"Beton C30/37","name_en":"Concrete C30/37","a1a3":0.112,"unit":"kg","conversions":{"kg/m3":2400}},
		{"id":"6000000000","name":"Spånplade","a1a3":0.5,"unit":"kg"}]}`)
	var res core.IngestResult
	r.json(t, &res)
	if r.Status != 200 || res.Catalog != core.DKBR || res.Origin != core.OriginFile || res.Upserted != 2 || res.Version != "BR25" {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	var got core.Resource
	e.get("/api/resources/br25:%23G0164").json(t, &got)
	if got.Catalog != core.DKBR || got.NameDA != "Beton C30/37" || got.Name != "Beton C30/37" || got.Version != "BR25" || got.Origin != "" {
		t.Fatalf("dkbr resource: %+v", got)
	}
	// The same bare id in both catalogs is ambiguous.
	amb := e.get("/api/resources/6000000000")
	var body struct {
		Error    string           `json:"error"`
		Catalogs []core.CatalogID `json:"catalogs"`
	}
	amb.json(t, &body)
	if amb.Status != http.StatusConflict || !contains(body.Error, "national") || !contains(body.Error, "dkbr") || len(body.Catalogs) != 2 {
		t.Fatalf("ambiguous id: %d %s", amb.Status, amb.Body)
	}
	if r := e.get("/api/resources/dkbr:6000000000/origin"); r.Status != 404 || !contains(r.errMsg(t), "no public product sheet") {
		t.Fatalf("dkbr origin: %d %s", r.Status, r.Body)
	}
	if r := e.get("/api/resources/6000000000/origin"); r.Status != 409 {
		t.Fatalf("ambiguous origin: %d", r.Status)
	}
	var s core.SearchResponse
	e.get("/api/search?q=beton&databases=br25").json(t, &s)
	if len(s.Results) == 0 || s.Results[0].ID != "#G0164" || s.Results[0].Details != "/api/resources/dkbr:%23G0164" {
		t.Fatalf("dkbr search: %+v", s.Results)
	}
	// Sending the batch again changes nothing.
	r = post(`{"catalog":"dkbr","version":"BR25","resources":[{"id":"#G0164","name":"Beton C30/37","name_en":"Concrete C30/37","a1a3":0.112,"unit":"kg","conversions":{"kg/m3":2400}}]}`)
	r.json(t, &res)
	if res.Upserted != 0 || res.Unchanged != 1 {
		t.Fatalf("repeat: %+v", res)
	}

	// Bad input: a clear 400 and nothing stored.
	for _, tc := range []struct{ body, want string }{
		{`{"catalog":"dkbr","resources":[{"id":"#X1","a1a3":1},{"name":"no id"}]}`, "resources[1]: id is required"},
		{`{"catalog":"dk","resources":[{"id":"1"}]}`, "unknown catalog"},
		{`{"catalog":"dkbr","resources":[{"id":"#X1","a1a3":"high"}]}`, "not a valid ResourceBatch"},
		{`{"catalog":"dkbr","resources":[{"id":"#X1","colour":"red"}]}`, "unknown field"},
		{`{"catalog":"dkbr","resources":[]}`, "resources is empty"},
		{`not json`, "not a valid ResourceBatch"},
	} {
		r := post(tc.body)
		if r.Status != 400 || !contains(r.errMsg(t), tc.want) {
			t.Errorf("%s: %d %s (want 400 with %q)", tc.body, r.Status, r.Body, tc.want)
		}
	}
	if r := e.get("/api/resources/dkbr:%23X1"); r.Status != 404 {
		t.Fatalf("a refused batch stored a resource: %d", r.Status)
	}
	if r := e.do(http.MethodPost, "/admin/resources", []byte(`{}`), map[string]string{"Content-Type": "text/plain"}); r.Status != http.StatusUnsupportedMediaType {
		t.Fatalf("content type: %d", r.Status)
	}
	big := `{"catalog":"dkbr","resources":[{"id":"1","description":"` + strings.Repeat("x", 9<<20) + `"}]}`
	if r := post(big); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d", r.Status)
	}
	if r := e.do(http.MethodPost, "/admin/ingest/run?catalog=dkbr", nil, nil); r.Status != 400 || !contains(r.errMsg(t), "no upstream") {
		t.Fatalf("dkbr has no upstream: %d %s", r.Status, r.Body)
	}
	if r := e.do(http.MethodPost, "/admin/ingest/run", nil, nil); r.Status != 400 {
		t.Fatalf("catalog required: %d", r.Status)
	}
}

func TestIngestsOfOneCatalogNeverOverlap(t *testing.T) {
	e := newEnv(t, map[string]string{"SERVICE_INGEST_TIMEOUT": "3s"})
	e.Up.Hang(true)
	first := make(chan response, 1)
	go func() {
		r := e.do(http.MethodPost, "/admin/ingest/run?catalog=national", nil, nil)
		first <- r
	}()
	// Wait until the first ingest is talking to the publisher.
	deadline := time.Now().Add(5 * time.Second)
	for e.Up.Requests(boverkettest.JSONPathPrefix) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first ingest never reached the publisher")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := e.do(http.MethodPost, "/admin/ingest/run?catalog=national", nil, nil)
	if r.Status != http.StatusConflict || !contains(r.errMsg(t), "already running") {
		t.Fatalf("second ingest while the first runs: %d %s", r.Status, r.Body)
	}
	// Batches wait for the catalog's write lock instead; reads are never blocked.
	if r := e.get("/healthz"); r.Status != 200 {
		t.Fatalf("health during an ingest: %d", r.Status)
	}
	e.Up.Hang(false)
	if got := <-first; got.Status != http.StatusOK && got.Status != http.StatusBadGateway {
		t.Fatalf("first ingest: %d %s", got.Status, got.Body)
	}
	if r := e.do(http.MethodPost, "/admin/ingest/run?catalog=national", nil, nil); r.Status != 200 {
		t.Fatalf("after the first finished: %d %s", r.Status, r.Body)
	}
}
