package blugeindex

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

type goldenQuery struct {
	ID       string    `json:"id"`
	Q        string    `json:"q"`
	Lang     core.Lang `json:"lang"`
	Kind     string    `json:"kind"`
	ExpectID string    `json:"expect_id"`
}

func loadGolden(tb testing.TB) []goldenQuery {
	tb.Helper()
	var set struct {
		Queries []goldenQuery `json:"queries"`
	}
	if err := json.Unmarshal(shareddata.Read(tb, "eval", "golden-dev.json"), &set); err != nil {
		tb.Fatal(err)
	}
	return set.Queries
}

// TestGoldenHitAt1 reports Hit@1 of the golden queries that name an
// expect_id. Information only: ranking quality is tuned in a later issue,
// so no threshold is asserted yet.
func TestGoldenHitAt1(t *testing.T) {
	x := newIndex(t, loadNational(t))
	var n, hit1, hit3 int
	for _, g := range loadGolden(t) {
		if g.ExpectID == "" {
			continue
		}
		n++
		got := search(t, x, core.TextQuery{Text: g.Q, Lang: g.Lang, Catalogs: []core.CatalogID{core.National}})
		rank := 0
		for i, h := range got {
			if h.Key.ID == g.ExpectID {
				rank = i + 1
				break
			}
		}
		switch {
		case rank == 1:
			hit1++
			hit3++
		case rank > 1 && rank <= 3:
			hit3++
		}
		if rank != 1 {
			top := "none"
			if len(got) > 0 {
				top = got[0].Key.ID
			}
			t.Logf("miss %-24s %-8s q=%q want %s rank %d (top %s)", g.ID, g.Kind, g.Q, g.ExpectID, rank, top)
		}
	}
	if n == 0 {
		t.Fatal("no golden query with expect_id")
	}
	t.Logf("golden-dev: Hit@1 %d/%d = %.3f, Hit@3 %d/%d = %.3f", hit1, n, float64(hit1)/float64(n), hit3, n, float64(hit3)/float64(n))
}

// BenchmarkSearch times one search over the 228 national resources: "mix"
// cycles through the queries, the sub-benchmarks time each alone.
func BenchmarkSearch(b *testing.B) {
	x := newIndex(b, loadNational(b))
	queries := []struct {
		name string
		q    core.TextQuery
	}{
		{"sv-word", core.TextQuery{Text: "spånskiva", Lang: core.Swedish}},
		{"en-words", core.TextQuery{Text: "particle board", Lang: core.English}},
		{"sv-sibling", core.TextQuery{Text: "klimatförbättrad betong C35/45", Lang: core.Swedish}},
		{"en-filtered", core.TextQuery{Text: "stone wool roof board", Lang: core.English, Catalogs: []core.CatalogID{core.National}}},
		{"id", core.TextQuery{Text: "6000000168"}},
	}
	ctx := context.Background()
	b.Run("mix", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := x.Search(ctx, queries[i%len(queries)].q); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	for _, c := range queries {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := x.Search(ctx, c.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
