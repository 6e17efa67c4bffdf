package blugeindex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
)

// loadCatalog maps the publisher's real exports (02.06 Swedish, 02.07
// English) with the project's own mapping, as the service ingests them: 235
// bilingual resources with names, descriptions, applicability, synonyms and
// categories in both languages. Test files may import another adapter; the
// package itself may not.
func loadCatalog(tb testing.TB) []core.Resource {
	tb.Helper()
	catalogOnce.Do(func() {
		sv, err := boverket.DecodeExport(boverkettest.LoadExport(tb, boverkettest.Export0206SV))
		if err != nil {
			tb.Fatal(err)
		}
		en, err := boverket.DecodeExport(boverkettest.LoadExport(tb, boverkettest.Export0207EN))
		if err != nil {
			tb.Fatal(err)
		}
		catalog = boverket.Merge(sv, en).Resources
	})
	if len(catalog) != 235 {
		tb.Fatalf("loaded %d resources, want 235", len(catalog))
	}
	out := make([]core.Resource, len(catalog))
	for i := range catalog {
		out[i] = catalog[i].Clone()
	}
	return out
}

var (
	catalogOnce sync.Once
	catalog     []core.Resource
)

func newIndex(tb testing.TB, rs []core.Resource) *Index {
	tb.Helper()
	x, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = x.Close() })
	if err := x.Upsert(context.Background(), rs); err != nil {
		tb.Fatal(err)
	}
	return x
}

func search(tb testing.TB, x *Index, q core.TextQuery) []core.Scored {
	tb.Helper()
	got, err := x.Search(context.Background(), q)
	if err != nil {
		tb.Fatalf("Search(%+v): %v", q, err)
	}
	return got
}

func ids(hits []core.Scored) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Key.String()
	}
	return out
}

func wantFirst(t *testing.T, x *Index, q core.TextQuery, id string) {
	t.Helper()
	got := search(t, x, q)
	if len(got) == 0 || got[0].Key != (core.Key{Catalog: core.National, ID: id}) {
		t.Errorf("%q (lang %s): want national:%s first, got %v", q.Text, q.Lang, id, ids(got))
	}
}

func TestSearchRealData(t *testing.T) {
	x := newIndex(t, loadCatalog(t))

	wantFirst(t, x, core.TextQuery{Text: "spånskiva", Lang: core.Swedish}, "6000000000")
	wantFirst(t, x, core.TextQuery{Text: "particle board", Lang: core.English}, "6000000000")
	wantFirst(t, x, core.TextQuery{Text: "limträ", Lang: core.Swedish}, "6000000168")
	// Invisible characters in the query must not split the word.
	wantFirst(t, x, core.TextQuery{Text: "spån\u200bskiva", Lang: core.Swedish}, "6000000000")
	wantFirst(t, x, core.TextQuery{Text: "spån\u00adskiva", Lang: core.Swedish}, "6000000000")
	// A query equal to an id, bare or prefixed, finds that resource.
	wantFirst(t, x, core.TextQuery{Text: "6000000168"}, "6000000168")
	wantFirst(t, x, core.TextQuery{Text: " National:6000000168 "}, "6000000168")
	// The requested catalog passes the filter.
	wantFirst(t, x, core.TextQuery{Text: "limträ", Catalogs: []core.CatalogID{core.National}}, "6000000168")

	if got := search(t, x, core.TextQuery{Text: "limträ", Catalogs: []core.CatalogID{core.DKBR}}); len(got) != 0 {
		t.Errorf("dkbr filter over national data: got %v", ids(got))
	}
	for _, q := range []string{"", "   ", "\u200b", " \u00ad\t"} {
		got, err := x.Search(context.Background(), core.TextQuery{Text: q})
		if err != nil || len(got) != 0 {
			t.Errorf("Search(%q) = %v, %v; want no results, no error", q, ids(got), err)
		}
	}
}

// The lexicon counts each resource once, by the fingerprint of its
// prefixed key, which it computes without building the term; an id term
// matches as many resources as hold it among their id terms, whichever
// of the two it is, with ids that differ in case only, the same id in
// both catalogs and an id that is another resource's prefixed key.
func TestIDCountsAreTheIDTermsMatches(t *testing.T) {
	for _, k := range []core.Key{
		{Catalog: core.National, ID: "6000000168"},
		{Catalog: core.DKBR, ID: "#G0164"},
		{Catalog: "Ägarens", ID: "ÅÄÖ-Straße-İ-ǅ"},
		{Catalog: core.National, ID: ""},
	} {
		if got, want := keyHash(k), hashOf(idTerms(k)[1]); got != want {
			t.Errorf("%s: fingerprint %x, want %x (of %q)", k, got, want, idTerms(k)[1])
		}
	}
	if hashOf("a", "bc") != hashOf("ab", "c") || hashOf("ab") == hashOf("ba") {
		t.Error("hashOf is not a fingerprint of the concatenation")
	}

	keys := []core.Key{
		{Catalog: core.National, ID: "A1"},
		{Catalog: core.National, ID: "a1"},
		{Catalog: core.DKBR, ID: "A1"},
		{Catalog: core.DKBR, ID: "national:a1"},
		{Catalog: core.DKBR, ID: "#G0164"},
	}
	var rs []core.Resource
	for _, k := range keys {
		rs = append(rs, core.Resource{Catalog: k.Catalog, ID: k.ID, NameSV: "Träfiberskiva", NameDA: "Træfiberplade"})
	}
	x := newIndex(t, rs)
	for term, want := range map[string]int32{
		"a1":                3, // two national ids and a Danish one
		"national:a1":       3, // two prefixed keys and a Danish id
		"dkbr:a1":           1,
		"dkbr:national:a1":  1,
		"#g0164":            1,
		"dkbr:#g0164":       1,
		"national:#g0164":   0,
		"träfiberskiva":     0,
		"dkbr:national:a1x": 0,
	} {
		var brute int32
		for _, k := range keys {
			if slices.Contains(idTerms(k), term) {
				brute++
			}
		}
		if brute != want {
			t.Fatalf("%q: the test expects %d, the id terms hold it %d times", term, want, brute)
		}
		if got := x.lex.idCount(term); got != want {
			t.Errorf("idCount(%q) = %d, want %d", term, got, want)
		}
	}
	if err := x.Remove(context.Background(), keys[:2]); err != nil {
		t.Fatal(err)
	}
	if got := x.lex.idCount("a1"); got != 1 {
		t.Errorf("after removing the national A1 and a1: idCount(a1) = %d, want 1", got)
	}
	if len(x.lex.ids) != len(keys)-2 {
		t.Errorf("the lexicon counts %d keys, want %d", len(x.lex.ids), len(keys)-2)
	}
}

func TestSearchLimitAndOrder(t *testing.T) {
	x := newIndex(t, loadCatalog(t))

	got := search(t, x, core.TextQuery{Text: "betong"})
	if len(got) != core.DefaultLimit {
		t.Fatalf("default limit: got %d results, want %d", len(got), core.DefaultLimit)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("not best first at %d: %v", i, got)
		}
	}
	if got := search(t, x, core.TextQuery{Text: "betong", Limit: 3}); len(got) != 3 {
		t.Errorf("limit 3: got %d", len(got))
	}
	if got := search(t, x, core.TextQuery{Text: "betong", Limit: 1000}); len(got) <= core.DefaultLimit {
		t.Errorf("limit 1000: got only %d", len(got))
	}
}

func TestTiesOrderedByKey(t *testing.T) {
	// Identical texts score identically; the key decides, whatever the
	// insertion order.
	var rs []core.Resource
	for _, id := range []string{"c", "a", "d", "b"} {
		rs = append(rs, core.Resource{ID: id, Catalog: core.DKBR, NameDA: "mursten"})
	}
	rs = append(rs, core.Resource{ID: "a", Catalog: core.National, NameDA: "mursten"})
	x := newIndex(t, rs)
	got := ids(search(t, x, core.TextQuery{Text: "mursten"}))
	want := []string{"dkbr:a", "dkbr:b", "dkbr:c", "dkbr:d"}
	if strings.Join(got, ",") != strings.Join(append(want, "national:a"), ",") {
		t.Errorf("got %v, want %v then national:a", got, want)
	}
	// The catalog filter adds nothing to the score, so its own ordering
	// survives the filter.
	got = ids(search(t, x, core.TextQuery{Text: "mursten", Catalogs: []core.CatalogID{core.DKBR}}))
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("filtered: got %v, want %v", got, want)
	}
}

func TestLangBoostDoesNotExclude(t *testing.T) {
	x := newIndex(t, []core.Resource{
		{ID: "1", Catalog: core.National, NameSV: "fönster"},
		{ID: "2", Catalog: core.National, NameEN: "window"},
	})
	for _, lang := range []core.Lang{core.Swedish, core.English} {
		if got := search(t, x, core.TextQuery{Text: "window", Lang: lang}); len(got) != 1 || got[0].Key.ID != "2" {
			t.Errorf("lang %s: got %v", lang, ids(got))
		}
	}
}

func TestUpsertAndRemove(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)
	x := newIndex(t, rs)
	key := core.Key{Catalog: core.National, ID: "6000000168"}

	if err := x.Remove(ctx, []core.Key{key, {Catalog: core.National, ID: "no-such-id"}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"limträ", "6000000168"} {
		for _, h := range search(t, x, core.TextQuery{Text: q, Limit: 1000}) {
			if h.Key == key {
				t.Errorf("%q still finds removed %s", q, key)
			}
		}
	}

	// Back, under a new name: the new name finds it, the old one no longer.
	var r core.Resource
	for _, c := range rs {
		if c.Key() == key {
			r = c.Clone()
		}
	}
	r.NameSV, r.NameEN, r.Synonyms, r.SynonymsEN = "Kvastskaft", "Broomstick", "", ""
	r.DescriptionSV, r.DescriptionEN, r.ApplicabilitySV, r.ApplicabilityEN = "", "", "", ""
	r.Category, r.CategoryEN, r.BK04 = "", "", ""
	if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
		t.Fatal(err)
	}
	wantFirst(t, x, core.TextQuery{Text: "kvastskaft", Lang: core.Swedish}, key.ID)
	for _, h := range search(t, x, core.TextQuery{Text: "limträ", Limit: 1000}) {
		if h.Key == key {
			t.Errorf("old name still finds %s", key)
		}
	}

	// Upserting again replaces, never duplicates.
	if err := x.Upsert(ctx, []core.Resource{r, r}); err != nil {
		t.Fatal(err)
	}
	if got := search(t, x, core.TextQuery{Text: "kvastskaft"}); len(got) != 1 {
		t.Errorf("after re-upsert: got %v, want one hit", ids(got))
	}

	// A withdrawn resource leaves the index.
	r.Withdrawn = true
	if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
		t.Fatal(err)
	}
	if got := search(t, x, core.TextQuery{Text: "kvastskaft"}); len(got) != 0 {
		t.Errorf("withdrawn still found: %v", ids(got))
	}
}

func TestUpsertRejectsResourceWithoutKey(t *testing.T) {
	x := newIndex(t, nil)
	err := x.Upsert(context.Background(), []core.Resource{
		{ID: "1", Catalog: core.National, NameSV: "tegel"},
		{Catalog: core.National, NameSV: "betong"},
	})
	if core.KindOf(err) != core.KindInvalid {
		t.Fatalf("got %v, want an invalid-request error", err)
	}
	if got := search(t, x, core.TextQuery{Text: "tegel"}); len(got) != 0 {
		t.Errorf("a rejected batch must write nothing, got %v", ids(got))
	}
}

func TestClosed(t *testing.T) {
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := x.Search(context.Background(), core.TextQuery{Text: "betong"}); err != ErrClosed {
		t.Errorf("Search after Close: %v", err)
	}
	if err := x.Upsert(context.Background(), []core.Resource{{ID: "1", Catalog: core.National}}); err != ErrClosed {
		t.Errorf("Upsert after Close: %v", err)
	}
}

// TestConcurrentSearchAndWrite runs searches while other resources are
// upserted and removed; run it with -race. The searched resource is never
// touched, so every search must still find it.
func TestConcurrentSearchAndWrite(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)
	x := newIndex(t, rs)

	var churn []core.Resource
	for _, r := range rs {
		if r.ID != "6000000000" && len(churn) < 50 {
			churn = append(churn, r)
		}
	}
	stop := make(chan struct{})
	var writers, searchers sync.WaitGroup
	errs := make(chan error, 16)

	writers.Go(func() {
		// Few rounds: under -race each batch takes a few hundred ms.
		for i := range 5 {
			batch := churn[i%len(churn):]
			batch = batch[:min(len(batch), 10)]
			if err := x.Upsert(ctx, batch); err != nil {
				errs <- err
				return
			}
			keys := make([]core.Key, len(batch))
			for j, r := range batch {
				keys[j] = r.Key()
			}
			if err := x.Remove(ctx, keys); err != nil {
				errs <- err
				return
			}
		}
	})
	for g := range 3 {
		searchers.Go(func() {
			queries := []string{"spånskiva", "particle board", "betong", "6000000000"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := queries[(g+i)%len(queries)]
				got, err := x.Search(ctx, core.TextQuery{Text: q, Limit: 50})
				if err != nil {
					errs <- err
					return
				}
				if q != "betong" && !containsID(got, "6000000000") {
					errs <- fmt.Errorf("%q lost 6000000000 during writes: %v", q, ids(got))
					return
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	searchers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// The writers removed the churned resources last.
	for _, r := range churn[:14] {
		for _, h := range search(t, x, core.TextQuery{Text: r.ID}) {
			if h.Key == r.Key() {
				t.Errorf("%s found after its final Remove", r.Key())
			}
		}
	}
}

func containsID(hits []core.Scored, id string) bool {
	for _, h := range hits {
		if h.Key.ID == id {
			return true
		}
	}
	return false
}
