package blugeindex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// answers runs every golden query (all catalogs, 20 hits) and returns the
// hits with their scores, one line per hit.
func answers(t *testing.T, x *Index, golden []goldenQuery) []string {
	t.Helper()
	var out []string
	for _, g := range golden {
		for i, h := range search(t, x, core.TextQuery{Text: g.Q, Lang: g.Lang, Limit: 20}) {
			out = append(out, fmt.Sprintf("%s #%d %s %.12g", g.ID, i+1, h.Key, h.Score))
		}
	}
	return out
}

// TestRankingIndependentOfHistory loads the same live resources through
// different histories and asks the dev golden set of each: the hits, their
// order and their scores must be the same. The histories:
//
//   - one batch (what a restart's rebuild does for a small catalog);
//   - ten batches in reverse order, with between them updates that rename
//     resources (new words, so new compound dictionaries) and withdrawals,
//     all undone by later batches (the documents bluge keeps until a merge
//     drop the old versions);
//   - the resources one by one, with every tenth removed and added again.
//
// Before the statistics were taken over live documents only, the second
// history scored with bluge's counts of replaced documents; before compound
// modifiers were learned independently of map order, even two runs of the
// first history could analyse a text differently.
func TestRankingIndependentOfHistory(t *testing.T) {
	ctx := context.Background()
	golden := loadGolden(t)
	rs := loadCatalog(t)
	want := answers(t, newIndex(t, rs), golden)
	if len(want) < len(golden) {
		t.Fatalf("only %d hits for %d golden queries", len(want), len(golden))
	}

	histories := map[string]func(x *Index) error{
		"ten batches with updates and withdrawals": func(x *Index) error {
			rev := slices.Clone(rs)
			slices.Reverse(rev)
			for b := 0; b < 10; b++ {
				chunk := rev[b*len(rev)/10 : (b+1)*len(rev)/10]
				if err := x.Upsert(ctx, chunk); err != nil {
					return err
				}
				// Rename a few loaded resources (words the catalog lacks,
				// compounds of words it has) and withdraw a few.
				var renamed, gone []core.Resource
				for i := 0; i < len(chunk); i += 7 {
					r := chunk[i].Clone()
					r.NameSV = "Provträullsandwichskiva " + r.NameSV + fmt.Sprintf(" omgång%d", b)
					r.NameEN = strings.ToUpper(r.NameEN) + " trial"
					renamed = append(renamed, r)
				}
				for i := 3; i < len(chunk); i += 11 {
					w := chunk[i].Clone()
					w.Withdrawn = true
					gone = append(gone, w)
				}
				if err := x.Upsert(ctx, append(renamed, gone...)); err != nil {
					return err
				}
				if b > 0 { // restore the previous chunk's originals
					if err := x.Upsert(ctx, rev[(b-1)*len(rev)/10:b*len(rev)/10]); err != nil {
						return err
					}
				}
			}
			return x.Upsert(ctx, rev[9*len(rev)/10:])
		},
		"one by one with removals": func(x *Index) error {
			for i, r := range rs {
				if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
					return err
				}
				if i%10 == 0 {
					if err := x.Remove(ctx, []core.Key{r.Key()}); err != nil {
						return err
					}
					if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	for name, history := range histories {
		t.Run(name, func(t *testing.T) {
			x, err := New()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = x.Close() })
			if err := history(x); err != nil {
				t.Fatal(err)
			}
			got := answers(t, x, golden)
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("answers differ from the one-batch index (%d vs %d hits), first at %d:\n got %s\nwant %s", len(got), len(want), i, got[i], want[i])
					}
				}
				t.Fatalf("answers differ from the one-batch index: %d vs %d hits", len(got), len(want))
			}
		})
	}
}

// alike returns n resources named alike, in a shuffled order.
func alike(n int) []core.Resource {
	rs := make([]core.Resource, n)
	for i := range rs {
		j := (i * 7919) % n // a permutation: 7919 is prime and n is not its multiple
		rs[i] = core.Resource{Catalog: core.DKBR, ID: fmt.Sprintf("#T%05d", j), NameDA: "Prøvesten blok"}
	}
	return rs
}

// TestLargeTieGroupsOrderedByKey: thousands of resources of the same score
// (the same name) answer in key order, whatever order and batches they came
// in; the group exceeds what candidates fetches, so this is the key-ordered
// path.
func TestLargeTieGroupsOrderedByKey(t *testing.T) {
	rs := alike(5000)
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	for i := 0; i < len(rs); i += 700 {
		if err := x.Upsert(context.Background(), rs[i:min(len(rs), i+700)]); err != nil {
			t.Fatal(err)
		}
	}
	got := ids(search(t, x, core.TextQuery{Text: "prøvesten", Limit: 10}))
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("dkbr:#T%05d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// BenchmarkLargeTieGroup is a search whose matches all score alike (20,000
// resources of one name): before the key-ordered path, about 160 ms.
func BenchmarkLargeTieGroup(b *testing.B) {
	x := newIndex(b, alike(20000))
	for b.Loop() {
		if _, err := x.Search(context.Background(), core.TextQuery{Text: "prøvesten", Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
}
