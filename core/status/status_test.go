package status_test

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/status"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/realdata"
)

const embedder = "test-embedder-320"

// fixture: the real national catalog (235 resources, 5 withdrawn), four
// Danish rows, and vectors for all but a few national resources: one of them
// computed from older content.
func fixture(t *testing.T) (*status.Service, []core.Resource) {
	t.Helper()
	rs := realdata.National(t, boverkettest.Export0206SV, boverkettest.Export0207EN)
	withdrawn := map[string]bool{"6000000157": true, "6000000164": true, "6000000165": true, "6000000166": true, "6000000169": true}
	for i := range rs {
		rs[i].Withdrawn = withdrawn[rs[i].ID]
	}
	dk := realdata.DKBRRows(t, "#G0530", "#G0701", "#G1075")
	st := realdata.OpenStore(t, rs, dk)
	var vs []ports.StoredVector
	for i, r := range rs {
		if r.Withdrawn || i%50 == 1 { // a few live ones have no vector yet
			continue
		}
		h := core.ContentHash(&r)
		if r.ID == "6000000000" {
			h = "older-content"
		}
		vs = append(vs, ports.StoredVector{Key: r.Key(), Hash: h, Vec: make([]float32, 320)})
	}
	if err := st.PutVectors(context.Background(), embedder, vs); err != nil {
		t.Fatal(err)
	}
	return status.New(st, st, embedder), rs
}

func TestCatalogsCountLiveWithdrawnAndVectorCoverage(t *testing.T) {
	svc, rs := fixture(t)
	cs, err := svc.Catalogs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Catalog.ID != core.National || cs[1].Catalog.ID != core.DKBR {
		t.Fatalf("catalogs: %+v", cs)
	}
	missing := 0
	for i, r := range rs {
		if !r.Withdrawn && i%50 == 1 {
			missing++
		}
	}
	n := cs[0]
	if n.Live != 230 || n.Withdrawn != 5 || n.Embedding.Total != 230 || n.Embedding.Stale != 1 ||
		n.Embedding.Missing != missing || n.Embedding.Current != 230-1-missing || n.Embedding.EmbedderID != embedder {
		t.Fatalf("national: live %d withdrawn %d embedding %+v (missing want %d)", n.Live, n.Withdrawn, n.Embedding, missing)
	}
	if d := cs[1]; d.Live != 3 || d.Embedding.Missing != 3 || d.Catalog.Source != core.SourceDKBR {
		t.Fatalf("dkbr: %+v", d)
	}
}

func TestBrowseFiltersAndPages(t *testing.T) {
	svc, _ := fixture(t)
	ctx := context.Background()
	all, err := svc.Browse(ctx, core.ResourceFilter{Limit: 100})
	if err != nil || all.Total != 233 || len(all.Resources) != 100 {
		t.Fatalf("all live: total %d page %d err %v", all.Total, len(all.Resources), err)
	}
	next, _ := svc.Browse(ctx, core.ResourceFilter{Offset: 200, Limit: 100})
	if next.Total != 233 || len(next.Resources) != 33 || next.Resources[32].Catalog != core.DKBR {
		t.Fatalf("last page: total %d rows %d", next.Total, len(next.Resources))
	}
	w, _ := svc.Browse(ctx, core.ResourceFilter{Withdrawn: core.WithdrawnOnly})
	if w.Total != 5 || !w.Resources[0].Withdrawn {
		t.Fatalf("withdrawn only: %+v", w.Total)
	}
	inc, _ := svc.Browse(ctx, core.ResourceFilter{Withdrawn: core.WithdrawnInclude, Catalogs: []core.CatalogID{core.National}})
	if inc.Total != 235 {
		t.Fatalf("withdrawn included: %d", inc.Total)
	}
	txt, _ := svc.Browse(ctx, core.ResourceFilter{Text: "SPÅNSKIV", Lang: core.English})
	if txt.Total == 0 || txt.Resources[0].ID != "6000000000" || txt.Resources[0].Name != "Particle board" || txt.Resources[0].Vector != core.VectorStale {
		t.Fatalf("text filter: %+v", txt)
	}
	cat, _ := svc.Browse(ctx, core.ResourceFilter{Category: "building boards"})
	for _, r := range cat.Resources {
		if !strings.EqualFold(r.CategoryEN, "building boards") {
			t.Fatalf("category filter let %s (%s) through", r.Ref(), r.CategoryEN)
		}
	}
	if cat.Total == 0 {
		t.Fatal("category filter (English title) found nothing")
	}
	mv, _ := svc.Browse(ctx, core.ResourceFilter{MissingVector: true, Limit: 200})
	for _, r := range mv.Resources {
		if r.Vector == core.VectorCurrent || r.Withdrawn {
			t.Fatalf("missing-vector filter let %s (%s) through", r.Ref(), r.Vector)
		}
	}
	if mv.Total < 4 {
		t.Fatalf("missing vectors: %d", mv.Total)
	}
	for _, bad := range []core.ResourceFilter{{Withdrawn: "maybe"}, {Limit: core.MaxBrowseLimit + 1}, {Offset: -1}} {
		if _, err := svc.Browse(ctx, bad); core.KindOf(err) != core.KindInvalid {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
}

func TestCategoriesSpreadPerUnit(t *testing.T) {
	svc, rs := fixture(t)
	cats, err := svc.Categories(context.Background(), []core.CatalogID{core.National}, core.Swedish)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, c := range cats {
		total += c.Count
		if i > 0 && c.Count > cats[i-1].Count {
			t.Fatal("categories are not largest first")
		}
		for _, u := range c.Units {
			if u.N != len(u.Points) || u.Min > u.Q1 || u.Q1 > u.Median || u.Median > u.Q3 || u.Q3 > u.Max {
				t.Fatalf("%s/%s: %+v", c.Category, u.Unit, u)
			}
			for _, p := range u.Points {
				r := realdata.Find(t, rs, strings.TrimPrefix(p.Ref, "national:"))
				want := r.Category
				if want == "" {
					want = "(no category)" // the energy and fuel rows
				}
				if r.Unit != u.Unit || want != c.Category || *r.A1A3 != p.Value {
					t.Fatalf("point %s is in the wrong group: %q/%q %v vs %q/%q %v", p.Ref, r.Category, r.Unit, r.A1A3, c.Category, u.Unit, p.Value)
				}
			}
		}
	}
	if total != 230 {
		t.Fatalf("categories hold %d live resources, want 230", total)
	}
}

func TestSpreadQuartiles(t *testing.T) {
	pts := []core.SpreadPoint{{Ref: "a", Value: 4}, {Ref: "b", Value: 1}, {Ref: "c", Value: 3}, {Ref: "d", Value: 2}, {Ref: "e", Value: 5}}
	u := status.Spread("kg", pts)
	if u.Min != 1 || u.Q1 != 2 || u.Median != 3 || u.Q3 != 4 || u.Max != 5 || u.Points[0].Ref != "b" {
		t.Fatalf("%+v", u)
	}
	if u := status.Spread("kg", []core.SpreadPoint{{Value: 1}, {Value: 2}}); u.Median != 1.5 {
		t.Fatalf("even count median: %v", u.Median)
	}
}

func TestOverviewFollowsEveryWrite(t *testing.T) {
	rs := realdata.National(t, boverkettest.Export0206SV, boverkettest.Export0207EN)
	st := realdata.OpenStore(t, rs)
	svc := status.New(st, nil, "")
	ctx := context.Background()
	live := func() int {
		cs, err := svc.Overview(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cs[0].Embedding != (core.EmbeddingCoverage{}) {
			t.Fatalf("overview reads vectors: %+v", cs[0].Embedding)
		}
		return cs[0].Live
	}
	if n := live(); n != 235 {
		t.Fatalf("live %d", n)
	}
	// Withdraw one resource the way an ingest does: with new metadata.
	w := realdata.Find(t, rs, "6000000000")
	w.Withdrawn = true
	meta := core.CatalogMeta{Catalog: core.National, LastIngest: time.Now()}
	if err := st.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{{Resource: w, Hash: core.ContentHash(&w)}}, Meta: &meta}); err != nil {
		t.Fatal(err)
	}
	if n := live(); n != 234 {
		t.Fatalf("after a withdrawal: live %d, want 234", n)
	}
	// A new resource changes the stored count even without new metadata.
	nr := w
	nr.ID, nr.Withdrawn = "6999999999", false
	if err := st.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{{Resource: nr, Hash: core.ContentHash(&nr)}}}); err != nil {
		t.Fatal(err)
	}
	if n := live(); n != 235 {
		t.Fatalf("after an addition: live %d, want 235", n)
	}
}

// scans counts the catalog scans of a badger store; while gate is set,
// each scan waits for it to close.
type scans struct {
	*badgerstore.Store
	n    atomic.Int32
	gate chan struct{}
}

func (s *scans) Scan(ctx context.Context, c core.CatalogID, fn func(ports.StoredResource) error) error {
	s.n.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	return s.Store.Scan(ctx, c, fn)
}

func (s *scans) ScanStates(ctx context.Context, c core.CatalogID, fn func(ports.ResourceState) error) error {
	s.n.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	return s.Store.ScanStates(ctx, c, fn)
}

// uncounted hides the store's write count, as a store shared by several
// replicas has none.
type uncounted struct {
	ports.ResourceStore
	n *atomic.Int32
}

func (u uncounted) Scan(ctx context.Context, c core.CatalogID, fn func(ports.StoredResource) error) error {
	u.n.Add(1)
	return u.ResourceStore.Scan(ctx, c, fn)
}

func TestCatalogsKeptUntilAWrite(t *testing.T) {
	rs := realdata.National(t, boverkettest.Export0206SV, boverkettest.Export0207EN)
	st := &scans{Store: realdata.OpenStore(t, rs)}
	svc := status.New(st, st, embedder)
	ctx := context.Background()
	catalogs := func() []core.CatalogStatus {
		t.Helper()
		cs, err := svc.Catalogs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	first := catalogs()
	if first[0].Live != 235 || first[0].Embedding.Missing != 235 || st.n.Load() != 2 {
		t.Fatalf("first: %+v after %d scans", first[0], st.n.Load())
	}
	if again := catalogs(); !reflect.DeepEqual(again, first) || st.n.Load() != 2 {
		t.Fatalf("nothing written: scanned again (%d scans) or answered differently", st.n.Load())
	}

	// A vector written: the coverage moves.
	r := realdata.Find(t, rs, "6000000000")
	if err := st.PutVectors(ctx, embedder, []ports.StoredVector{{Key: r.Key(), Hash: core.ContentHash(&r), Vec: make([]float32, 320)}}); err != nil {
		t.Fatal(err)
	}
	if cs := catalogs(); cs[0].Embedding.Current != 1 || cs[0].Embedding.Missing != 234 {
		t.Fatalf("after a vector: %+v", cs[0].Embedding)
	}
	// A resource withdrawn (no new metadata): the counts move.
	w := r
	w.Withdrawn = true
	if err := st.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{{Resource: w, Hash: core.ContentHash(&w)}}}); err != nil {
		t.Fatal(err)
	}
	if cs := catalogs(); cs[0].Live != 234 || cs[0].Withdrawn != 1 || cs[0].Embedding.Current != 0 {
		t.Fatalf("after a withdrawal: %+v", cs[0])
	}
	// A chunked change rolled back: scanned again, the same answer during
	// it and after it as before it.
	before, scanned := catalogs(), st.n.Load()
	ch, err := st.BeginApply(ctx, core.National)
	if err != nil {
		t.Fatal(err)
	}
	nr := r
	nr.ID = "6999999999"
	if err := ch.Put(ctx, []ports.StoredResource{{Resource: nr, Hash: core.ContentHash(&nr)}}); err != nil {
		t.Fatal(err)
	}
	if cs := catalogs(); cs[0].Live != 234 {
		_ = ch.Abort(ctx)
		t.Fatalf("during the chunked change: live %d, want 234 (the store reads as it was until the change commits)", cs[0].Live)
	}
	if err := ch.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if cs := catalogs(); !reflect.DeepEqual(cs, before) || st.n.Load() != scanned+4 {
		t.Fatalf("after the rollback: %+v (%d scans, want %d)", cs[0], st.n.Load(), scanned+4)
	}

	// Callers arriving during a scan wait for it and share its answer.
	o := rs[0]
	if o.ID == r.ID {
		o = rs[1]
	}
	if err := st.PutVectors(ctx, embedder, []ports.StoredVector{{Key: o.Key(), Hash: "older", Vec: make([]float32, 320)}}); err != nil {
		t.Fatal(err)
	}
	st.gate = make(chan struct{})
	scanned = st.n.Load()
	var wg sync.WaitGroup
	answers := make([][]core.CatalogStatus, 4)
	for i := range answers {
		wg.Go(func() { answers[i] = catalogs() })
	}
	for st.n.Load() == scanned {
		runtime.Gosched()
	}
	// A caller that gives up while it waits gets an error, not a scan.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := svc.Catalogs(short); core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("cancelled while waiting: %v", err)
	}
	close(st.gate)
	wg.Wait()
	if st.n.Load() != scanned+2 {
		t.Fatalf("4 callers during a scan: %d scans, want 2 (one per catalog)", st.n.Load()-scanned)
	}
	for _, a := range answers[1:] {
		if !reflect.DeepEqual(a, answers[0]) || a[0].Embedding.Stale != 1 {
			t.Fatalf("callers answered differently: %+v / %+v", a[0].Embedding, answers[0][0].Embedding)
		}
	}

	// A store that does not count its writes is scanned every time.
	// It also decodes every resource (no ports.StateScanner), to the same
	// answer.
	var n atomic.Int32
	plain := status.New(uncounted{ResourceStore: st.Store, n: &n}, st.Store, embedder)
	for range 2 {
		cs, err := plain.Catalogs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cs, answers[0]) {
			t.Fatalf("decoding every resource: %+v, reading their states: %+v", cs[0], answers[0][0])
		}
	}
	if n.Load() != 4 {
		t.Fatalf("uncounted store: %d scans, want 4", n.Load())
	}
}

// TestCoverageWalksResourcesAndVectorsTogether: walking a catalog's
// resources and vectors side by side (both in id order) counts what the
// map of every vector's hash counts, whatever the ids (byte order, not
// numeric or case order) and with vectors of ids the store does not hold.
func TestCoverageWalksResourcesAndVectorsTogether(t *testing.T) {
	ctx := context.Background()
	var rs []core.Resource
	for _, id := range []string{"#G1", "#G10", "#G2", "#G1-x", "a", "B", "ø", "Z9", "10", "9"} {
		v := 1.0
		rs = append(rs, core.Resource{ID: id, Catalog: core.DKBR, NameDA: "Sten " + id, Unit: "kg", A1A3: &v, Source: core.CatalogInfo(core.DKBR).Source,
			Withdrawn: id == "Z9"})
	}
	st := realdata.OpenStore(t, rs)
	hash := map[string]string{}
	for _, r := range rs {
		hash[r.ID] = core.ContentHash(&r)
	}
	var vs []ports.StoredVector
	for id, h := range map[string]string{"#G1": hash["#G1"], "#G10": "older", "ø": hash["ø"], "9": hash["9"], "Z9": hash["Z9"],
		"#G0": "orphan", "zzz": "orphan", "#G1-": "orphan"} {
		vs = append(vs, ports.StoredVector{Key: core.Key{Catalog: core.DKBR, ID: id}, Hash: h, Vec: make([]float32, 320)})
	}
	if err := st.PutVectors(ctx, embedder, vs); err != nil {
		t.Fatal(err)
	}
	walked, err := status.New(st, st, embedder).Catalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	mapped, err := status.New(uncounted{ResourceStore: st, n: &n}, st, embedder).Catalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := core.EmbeddingCoverage{EmbedderID: embedder, Total: 9, Current: 3, Stale: 1, Missing: 5}
	if d := walked[1]; d.Live != 9 || d.Withdrawn != 1 || d.Embedding != want || !reflect.DeepEqual(walked, mapped) {
		t.Fatalf("walked %+v, mapped %+v, want %+v", d.Embedding, mapped[1].Embedding, want)
	}
}
