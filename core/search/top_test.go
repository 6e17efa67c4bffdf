package search_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/evaluate"
	"github.com/climatesearch/climatesearch/core/search"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// catalogEnv is a store, a text index and the vectors over some resources.
type catalogEnv struct {
	st  *badgerstore.Store
	ix  *blugeindex.Index
	vec *embedding.Syncer
}

func newCatalogEnv(t testing.TB) *catalogEnv {
	t.Helper()
	st, err := badgerstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ix, err := blugeindex.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	vec := embedding.New(embedder.NewHash(), st, hnsw.NewCatalogIndex(ports.EmbeddingDim), st, slog.New(slog.DiscardHandler))
	return &catalogEnv{st: st, ix: ix, vec: vec}
}

// put stores, indexes and embeds resources (a withdrawn one leaves the
// index; its vector stays when keepVectors, as while the vectors lag).
func (e *catalogEnv) put(t testing.TB, rs []core.Resource, keepVectors bool) {
	t.Helper()
	ctx := context.Background()
	by := map[core.CatalogID][]ports.StoredResource{}
	var live []core.Resource
	var gone []core.Key
	for _, r := range rs {
		by[r.Catalog] = append(by[r.Catalog], ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		if r.Withdrawn {
			gone = append(gone, r.Key())
		} else {
			live = append(live, r)
		}
	}
	for c, puts := range by {
		if err := e.st.Apply(ctx, c, ports.Changes{Put: puts}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ix.Upsert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if keepVectors {
		gone = nil
	}
	if _, err := e.vec.Update(ctx, live, gone); err != nil {
		t.Fatal(err)
	}
}

// realResources returns the merged real exports (235 resources).
func realResources(t testing.TB) []core.Resource {
	t.Helper()
	sv, err := boverket.DecodeExport(boverkettest.LoadExport(t, boverkettest.Export0206SV))
	if err != nil {
		t.Fatal(err)
	}
	en, err := boverket.DecodeExport(boverkettest.LoadExport(t, boverkettest.Export0207EN))
	if err != nil {
		t.Fatal(err)
	}
	var out []core.Resource
	for _, r := range boverket.Merge(sv, en).Resources {
		r.Catalog, r.Source = core.National, core.SourceNational
		r.Normalize()
		out = append(out, r)
	}
	return out
}

// sameAnswers asks each query with vectors both ways (the top of the lists,
// and the whole match set) in two languages, several catalog choices,
// limits and offsets, with explanations (ranks and scores in each list),
// and fails on the first difference in anything but the time taken. It
// returns how many answers it compared and how many of them had more
// matches than core.MaxMatchSet.
func sameAnswers(t *testing.T, svc *search.Service, queries []string, catalogs [][]core.CatalogID, pages []page) (n, over int) {
	t.Helper()
	ctx := context.Background()
	ask := func(req core.SearchRequest, whole bool) core.SearchResponse {
		restore := search.WholeHybrid(svc, whole)
		defer restore()
		resp, err := svc.Search(ctx, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		resp.TookMs = 0
		return resp
	}
	for _, q := range queries {
		for _, lang := range []core.Lang{core.Swedish, core.English} {
			for _, cats := range catalogs {
				for _, pg := range pages {
					req := core.SearchRequest{Query: q, Lang: lang, Catalogs: cats, Vector: true, Limit: pg.limit, Offset: pg.offset, Explain: true}
					want := ask(req, true)
					got := ask(req, false)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%q %s %v limit %d offset %d: %s", q, lang, cats, pg.limit, pg.offset, answerDiff(got, want))
					}
					n++
					if want.Total >= core.MaxMatchSet {
						over++
					}
				}
			}
		}
	}
	return n, over
}

// page is a limit and an offset.
type page struct{ limit, offset int }

// answerDiff says where two answers differ first.
func answerDiff(got, want core.SearchResponse) string {
	if got.Total != want.Total {
		return fmt.Sprintf("total %d, want %d", got.Total, want.Total)
	}
	if !reflect.DeepEqual(got.Notes, want.Notes) {
		return fmt.Sprintf("notes %q, want %q", got.Notes, want.Notes)
	}
	if len(got.Results) != len(want.Results) {
		return fmt.Sprintf("%d results, want %d", len(got.Results), len(want.Results))
	}
	for i := range got.Results {
		g, w := got.Results[i], want.Results[i]
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("result %d: %s %v %+v, want %s %v %+v", i, g.Key(), g.Score, g.Explain, w.Key(), w.Score, w.Explain)
		}
	}
	return "other fields"
}

// goldenQueries are the queries of the dev golden set.
func goldenQueries(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(shareddata.Path(t, "eval", "golden-dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := evaluate.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, q := range g.Queries {
		qs = append(qs, q.Q)
	}
	return qs
}

// probeQueries derives queries from resources' own texts: a name's head,
// its first two words, a word with a letter dropped (a typo), a word of the
// description, an id; plus the scale queries and some that match nothing,
// or most of the catalog.
func probeQueries(rs []core.Resource, every int) []string {
	qs := append([]string{"zzzqqq", "skiva", "isolering board", "c30 37", "klimatförbättrad betong C35/45"}, scaleQueries...)
	for i := 0; i < len(rs); i += every {
		r := rs[i]
		words := strings.Fields(strings.NewReplacer(",", " ", "(", " ", ")", " ").Replace(r.NameSV))
		if len(words) == 0 {
			continue
		}
		qs = append(qs, words[0], r.ID)
		if len(words) > 1 {
			qs = append(qs, words[0]+" "+words[1])
		}
		if w := words[0]; utf8.RuneCountInString(w) > 5 {
			rn := []rune(w)
			qs = append(qs, string(append(rn[:2:2], rn[3:]...)))
		}
		if d := strings.Fields(r.DescriptionEN); len(d) > 3 {
			qs = append(qs, d[3])
		}
	}
	return qs
}

// TestTopOfListsEqualsWholeSetOnTheRealCatalog: a hybrid answer from the
// top of the lists is the answer of the whole match set, on the real
// catalog, for the dev golden set and probes of every resource, with the
// fusion settings of the hash embedder (weight 0.5, floor 0.30) and plain
// RRF without a floor.
func TestTopOfListsEqualsWholeSetOnTheRealCatalog(t *testing.T) {
	rs := realResources(t)
	e := newCatalogEnv(t)
	e.put(t, rs, false)
	queries := append(goldenQueries(t), probeQueries(rs, 5)...)
	if raceEnabled {
		queries = goldenQueries(t)[:20]
	}
	for _, cfg := range []search.Config{{VectorWeight: 0.5, VectorFloor: 0.30}, {VectorWeight: 1}} {
		svc := search.New(cfg, e.st, e.ix, core.NewVisibility(), e.vec, nil)
		n, _ := sameAnswers(t, svc, queries, [][]core.CatalogID{nil, {core.National}}, []page{{1, 0}, {10, 0}, {20, 0}, {20, 40}, {100, 0}, {7, 93}})
		t.Logf("weight %v floor %v: %d answers the same", cfg.VectorWeight, cfg.VectorFloor, n)
	}
}

// TestTopOfListsEqualsWholeSetOnASyntheticCatalog: the same on a catalog
// larger than core.MaxMatchSet (12,000 synthetic resources, the real ones,
// 300 synthetic ones in the second catalog), loaded in batches with
// renames and withdrawals between them, some withdrawn resources keeping
// their vectors (as while the vectors lag an ingest).
func TestTopOfListsEqualsWholeSetOnASyntheticCatalog(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("loads 12,000 resources and asks each question both ways: the ordinary run does it")
	}
	gen, err := synth.New(shareddata.Root(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	e := newCatalogEnv(t)
	const n = 12000
	var all []core.Resource
	for from := 0; from < n; from += 4000 {
		rs, err := gen.Resources(from, 4000)
		if err != nil {
			t.Fatal(err)
		}
		e.put(t, rs, false)
		all = append(all, rs...)
		// Rename some of the previous batch and withdraw others.
		var change []core.Resource
		for i := 0; i < from; i += 97 {
			r := all[i]
			if i%2 == 0 {
				r.NameSV, r.Name = r.NameSV+" förnyad", r.Name+" förnyad"
			} else {
				r.Withdrawn = true
			}
			change = append(change, r)
		}
		e.put(t, change, from%8000 == 0)
	}
	e.put(t, realResources(t), false)
	other, err := gen.Resources(n, 300)
	if err != nil {
		t.Fatal(err)
	}
	for i := range other {
		other[i].Catalog, other[i].Source = core.DKBR, core.SourceFor([]core.CatalogID{core.DKBR})
	}
	e.put(t, other, false)
	// The words of the synthetic product lines: each resource holds one.
	queries := append(probeQueries(all, 4000), "produktlinje typ variant serie modell", "typ variant serie modell", "modell spånskiva typ", "series model concrete")
	for _, cfg := range []search.Config{{VectorWeight: 0.5, VectorFloor: 0.30}, {VectorWeight: 1}} {
		svc := search.New(cfg, e.st, e.ix, core.NewVisibility(), e.vec, nil)
		got, over := sameAnswers(t, svc, queries, [][]core.CatalogID{nil, {core.National}, {core.DKBR}}, []page{{1, 0}, {20, 0}, {20, 40}, {7, 93}})
		t.Logf("weight %v floor %v: %d answers the same, %d of them over %d matches", cfg.VectorWeight, cfg.VectorFloor, got, over, core.MaxMatchSet)
		if over == 0 {
			t.Fatalf("no query matched more than %d resources: the cut match set is not tested", core.MaxMatchSet)
		}
	}
}

// TestVectorNotesWhileTheVectorsLoad: after a start, until the vectors are
// loaded, hybrid search says they are loading (not that none are stored);
// once loaded it notes nothing; with nothing stored it says so.
func TestVectorNotesWhileTheVectorsLoad(t *testing.T) {
	ctx := context.Background()
	rs := realResources(t)[:40]
	e := newCatalogEnv(t)
	puts := make([]ports.StoredResource, len(rs))
	for i, r := range rs {
		puts[i] = ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
	}
	if err := e.st.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
		t.Fatal(err)
	}
	if err := e.ix.Upsert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	svc := search.New(search.Config{VectorWeight: 1}, e.st, e.ix, core.NewVisibility(), e.vec, nil)
	notes := func() string {
		t.Helper()
		res, err := svc.Search(ctx, core.SearchRequest{Query: rs[0].NameSV, Vector: true, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(res.Notes, " | ")
	}
	if n := notes(); !strings.Contains(n, "still being loaded") || strings.Contains(n, "no vectors are stored") {
		t.Fatalf("before the vectors are loaded: %q", n)
	}
	if _, _, err := e.vec.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if n := notes(); strings.Contains(n, "vector search unavailable") {
		t.Fatalf("once loaded: %q", n)
	}
	empty := newCatalogEnv(t)
	if _, _, err := empty.vec.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	svc = search.New(search.Config{VectorWeight: 1}, empty.st, empty.ix, core.NewVisibility(), empty.vec, nil)
	if n := notes(); !strings.Contains(n, "no vectors are stored yet") {
		t.Fatalf("nothing stored: %q", n)
	}
}
