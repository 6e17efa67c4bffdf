package search

import (
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

func k(id string) core.Key { return core.Key{Catalog: core.National, ID: id} }

func TestFuseIsReciprocalRankFusionWithK60(t *testing.T) {
	fts := []core.Scored{{Key: k("a"), Score: 9}, {Key: k("b"), Score: 5}, {Key: k("c"), Score: 1}}
	vec := []core.Scored{{Key: k("c"), Score: 0.9}, {Key: k("d"), Score: 0.8}}
	got := fuse(fts, vec, 1)
	want := map[string]float64{
		"a": 1.0 / 61,
		"b": 1.0 / 62,
		"c": 1.0/63 + 1.0/61,
		"d": 1.0 / 62,
	}
	if len(got) != 4 {
		t.Fatalf("fused %d candidates", len(got))
	}
	for _, c := range got {
		if c.fused != want[c.key.ID] {
			t.Errorf("%s: fused %v, want %v", c.key.ID, c.fused, want[c.key.ID])
		}
	}
	// c (in both lists) first; a; then b and d tie at 1/62: both have best
	// rank 2, so the key decides.
	order := []string{got[0].key.ID, got[1].key.ID, got[2].key.ID, got[3].key.ID}
	if order[0] != "c" || order[1] != "a" || order[2] != "b" || order[3] != "d" {
		t.Fatalf("order %v", order)
	}
	if got[0].ftsRank != 3 || got[0].vecRank != 1 {
		t.Fatalf("ranks of c: %+v", got[0])
	}
}

func TestFuseTiesAreDeterministic(t *testing.T) {
	fts := []core.Scored{{Key: k("x")}, {Key: k("y")}}
	vec := []core.Scored{{Key: k("y")}, {Key: k("x")}}
	for i := 0; i < 20; i++ {
		got := fuse(fts, vec, 1)
		if got[0].key.ID != "x" || got[1].key.ID != "y" {
			t.Fatalf("tie order changed: %s %s", got[0].key.ID, got[1].key.ID)
		}
	}
}

func TestMatchSourceFollowsTheLists(t *testing.T) {
	got := fuse([]core.Scored{{Key: k("a")}, {Key: k("b")}}, []core.Scored{{Key: k("b")}, {Key: k("c")}}, 1)
	src := map[string]core.MatchSource{}
	for _, c := range got {
		src[c.key.ID] = hit(c, core.SearchRequest{Lang: core.Swedish}).MatchSource
	}
	if src["a"] != core.MatchFTS || src["b"] != core.MatchBoth || src["c"] != core.MatchVector {
		t.Fatalf("match sources %v", src)
	}
}

func TestWeightedFusionScalesTheVectorList(t *testing.T) {
	got := fuse([]core.Scored{{Key: k("a")}}, []core.Scored{{Key: k("b")}, {Key: k("a")}}, 0.5)
	if got[0].key.ID != "a" || got[0].fused != 1.0/61+0.5/62 || got[1].fused != 0.5/61 {
		t.Fatalf("weighted: %+v %+v", *got[0], *got[1])
	}
}
