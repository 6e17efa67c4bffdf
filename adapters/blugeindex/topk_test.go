package blugeindex

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blugelabs/bluge"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// synthResources returns synthetic national resources from..from+n-1
// (test/perf/synth, seed 1: the resources of the scale benchmarks), as an
// ingest makes them.
func synthResources(tb testing.TB, from, n int) []core.Resource {
	tb.Helper()
	gen, err := synth.New(shareddata.Root(tb), 1)
	if err != nil {
		tb.Fatal(err)
	}
	rs, err := gen.Resources(from, n)
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

// scaleQueries are the queries test/perf/scale.sh cycles over.
var scaleQueries = []string{"spånskiva", "betong C30/37", "glasull", "gipsskiva", "plywood", "mineralull",
	"armeringsstål", "concrete", "insulation", "fönster", "tegel", "diesel"}

// probeQueries derives queries from the resources' own texts: a name's
// head, its first two words, a word with a letter dropped (a typo), a word
// of the description, an id; plus the scale queries and a few that match
// nothing or everything alike.
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

// samePrunedAndFull asks every query both ways, in several languages,
// limits and catalog filters, and fails on the first difference in keys,
// order or scores (compared exactly) or in the count of matches. It
// returns how many answers it compared.
func samePrunedAndFull(t *testing.T, x *Index, queries []string, catalogs [][]core.CatalogID) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	// The block-max path as Search runs it (long lists only), with every
	// list in the cache, and with a cache too small to hold them all
	// (evictions, lists read from bluge beside cached ones).
	every := &blockCache{minLen: 1}
	tight := &blockCache{minLen: 1, maxBytes: 64 << 10}
	finders := []struct {
		name string
		find finder
	}{
		{"pruned", topK},
		{"block-max", x.blockTopK},
		{"block-max, every list", func(ctx context.Context, r *bluge.Reader, p *plan, lex *lexicon, depth int) ([]core.Scored, error) {
			return topKWith(ctx, r, p, lex, depth, every, nil, splitWalkFrom)
		}},
		{"block-max, every list, in two halves", func(ctx context.Context, r *bluge.Reader, p *plan, lex *lexicon, depth int) ([]core.Scored, error) {
			return topKWith(ctx, r, p, lex, depth, every, &x.ids, 1)
		}},
		{"pruned, in two halves", func(ctx context.Context, r *bluge.Reader, p *plan, lex *lexicon, depth int) ([]core.Scored, error) {
			return topKWith(ctx, r, p, lex, depth, nil, nil, 1)
		}},
		{"block-max, small cache", func(ctx context.Context, r *bluge.Reader, p *plan, lex *lexicon, depth int) ([]core.Scored, error) {
			return topKWith(ctx, r, p, lex, depth, tight, nil, splitWalkFrom)
		}},
	}
	for qi, text := range queries {
		if raceEnabled && qi%2 != 0 {
			// -race asks every other query: it is there for the data races
			// (the halves, the shared caches), and the ordinary run of the
			// suite asks them all (the synthetic catalog's took 249 s of
			// the package's 724 under -race).
			continue
		}
		finders := finders
		if raceEnabled && qi%8 != 0 {
			finders = finders[:2] // -race asks the cache a sample
		}
		for _, lang := range []core.Lang{core.Swedish, core.English} {
			for _, cats := range catalogs {
				for _, limit := range []int{1, 10, 20, 50, 100, accumulateMinDepth} {
					q := core.TextQuery{Text: text, Lang: lang, Catalogs: cats, Limit: limit}
					want, err := x.search(ctx, q, fullCandidates)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range finders {
						got, err := x.search(ctx, q, f.find)
						if err != nil {
							t.Fatal(err)
						}
						if d := firstDifference(got, want); d != "" {
							t.Fatalf("%+v: %s and full search differ: %s", q, f.name, d)
						}
					}
					n++
				}
				q := core.TextQuery{Text: text, Lang: lang, Catalogs: cats}
				if bitmaps, visits := countBothWays(t, x, q); bitmaps != visits {
					t.Fatalf("%+v: counted %d matches by bitmaps, %d by visiting them", q, bitmaps, visits)
				}
			}
		}
	}
	return n
}

// countBothWays counts the matches of a query by bitmaps (Count) and by
// visiting them in bluge's search.
func countBothWays(t *testing.T, x *Index, q core.TextQuery) (int, int) {
	t.Helper()
	ctx := context.Background()
	bitmaps, err := x.Count(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	text := core.CleanText(q.Text)
	visits, err := countByVisit(ctx, x.reader, planQuery(analyzeQuery(text, x.lex), x.lex, text, q.Lang, q.Catalogs))
	if err != nil {
		t.Fatal(err)
	}
	return bitmaps, visits
}

func firstDifference(got, want []core.Scored) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("pruned ends at %d, full has %s %v", i, want[i].Key, want[i].Score)
		case i >= len(want):
			return fmt.Sprintf("full ends at %d, pruned has %s %v", i, got[i].Key, got[i].Score)
		case got[i].Key != want[i].Key || math.Float64bits(got[i].Score) != math.Float64bits(want[i].Score):
			return fmt.Sprintf("#%d: pruned %s %v, full %s %v", i+1, got[i].Key, got[i].Score, want[i].Key, want[i].Score)
		}
	}
	return ""
}

// TestPrunedSearchEqualsFullOnTheRealCatalog: on the real catalog, the
// pruned top-k answers the dev golden set and queries drawn from every
// resource exactly as bluge's full scoring does.
func TestPrunedSearchEqualsFullOnTheRealCatalog(t *testing.T) {
	rs := loadCatalog(t)
	x := newIndex(t, rs)
	queries := probeQueries(rs, 1)
	for _, g := range loadGolden(t) {
		queries = append(queries, g.Q)
	}
	n := samePrunedAndFull(t, x, queries, [][]core.CatalogID{nil})
	t.Logf("%d answers compared", n)
}

// TestPrunedSearchEqualsFullOnASyntheticCatalog: the same on 4,000
// synthetic resources (many near-identical siblings, so large groups of
// equal scores at the cut) beside the real catalog and 300 resources in a
// second catalog (the catalog filter), loaded in batches with replacements
// and withdrawals in between: several segments holding deleted documents,
// as after a history of ingests.
func TestPrunedSearchEqualsFullOnASyntheticCatalog(t *testing.T) {
	x, rs := historyIndex(t)
	queries := probeQueries(rs, 100)
	n := samePrunedAndFull(t, x, queries, [][]core.CatalogID{nil, {core.National}, {core.DKBR}})
	t.Logf("%d answers compared", n)
}

// historyIndex is an index of 4,000 synthetic resources beside the real
// catalog and 300 resources in a second catalog, loaded in batches with
// replacements and withdrawals in between; it returns the national
// resources too.
func historyIndex(t *testing.T) (*Index, []core.Resource) {
	t.Helper()
	ctx := context.Background()
	rs := append(synthResources(t, 0, 4000), loadCatalog(t)...)
	var dk []core.Resource
	for i, r := range synthResources(t, 4000, 300) {
		dk = append(dk, core.Resource{Catalog: core.DKBR, ID: fmt.Sprintf("#S%04d", i), NameDA: r.NameSV, Synonyms: r.Synonyms, Category: r.Category})
	}
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	all := append(rs, dk...)
	for i := 0; i < len(all); i += 500 {
		chunk := all[i:min(len(all), i+500)]
		if err := x.Upsert(ctx, chunk); err != nil {
			t.Fatal(err)
		}
		// Replace some of the chunk (renamed, then back) and withdraw a
		// few for good.
		var renamed, back, gone []core.Resource
		for j := 0; j < len(chunk); j += 9 {
			r := chunk[j].Clone()
			r.NameSV += " provserie"
			renamed = append(renamed, r)
			back = append(back, chunk[j])
		}
		for j := 4; j < len(chunk); j += 50 {
			w := chunk[j].Clone()
			w.Withdrawn = true
			gone = append(gone, w)
		}
		for _, b := range [][]core.Resource{renamed, back, gone} {
			if err := x.Upsert(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	return x, rs
}

// TestRankedIsTheWholeSortCut: ranked, which sorts only what it keeps,
// gives what sorting every candidate by score, then id, and cutting the
// list gives: the depth best and the further ones scoring as the depth-th,
// at most 2*depth, in that order. The lists have long groups of equal
// scores at the cut, as a word most of a catalog holds gives.
func TestRankedIsTheWholeSortCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 3000; round++ {
		n := rng.IntN(500)
		levels := 1 + rng.IntN(6) // few distinct scores: long ties
		cands := make([]scoredDoc, n)
		for i := range cands {
			cands[i] = scoredDoc{doc: uint64(i), score: float64(1 + rng.IntN(levels))}
		}
		rng.Shuffle(n, func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		id := func(doc uint64) (string, error) { return fmt.Sprintf("national:%06d", (doc*7919)%100003), nil }
		depth := 1 + rng.IntN(80)

		sorted := slices.Clone(cands)
		slices.SortFunc(sorted, func(a, b scoredDoc) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			ia, _ := id(a.doc)
			ib, _ := id(b.doc)
			return strings.Compare(ia, ib)
		})
		var want []core.Scored
		for i, c := range sorted[:min(n, 2*depth)] {
			if i >= depth && c.score != sorted[depth-1].score {
				break
			}
			s, _ := id(c.doc)
			key, _ := parseKey(s)
			want = append(want, core.Scored{Key: key, Score: c.score})
		}
		got, err := ranked(cands, depth, id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (n %d, depth %d, %d levels):\n got %v\nwant %v", round, n, depth, levels, got, want)
		}
	}
}
