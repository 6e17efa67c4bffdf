package hnsw

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testN is the size of the recall tests: 5,000 as briefed, less under
// -race (see raceEnabled).
func testN() int { return sized(5000, 1200) }

// sized picks the normal size of a test, or the one for -race runs.
func sized(normal, race int) int {
	if raceEnabled {
		return race
	}
	return normal
}

// dataKinds are the two vector distributions the tests run on. Uniform
// vectors need a wide beam: they have no neighbourhood structure, so any
// graph search must look at most of the index to find the true top 10
// (the package comment has the figures). With the default beam, recall on
// them is 0.81 at 5,000.
var dataKinds = []struct {
	name string
	gen  func(*rand.Rand, int) [][]float32
	opt  Options
}{
	{"skewed", skewedVecs, Options{ExactBelow: -1}},
	{"uniform", uniformVecs, Options{ExactBelow: -1, EfSearch: 512}},
}

func TestRecall(t *testing.T) {
	for _, kind := range dataKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, 1))
			vs, qs := kind.gen(r, testN()), kind.gen(r, sized(200, 100))
			idx := New(dim, kind.opt)
			build(t, idx, vs)
			checkGraph(t, idx)
			got := recallAt(idx, qs, 10)
			// Against float32's true top 10, the int8 rounding counts too.
			exact, search := trueRecall(vs, qs, 10, idx.Exact), trueRecall(vs, qs, 10, idx.Search)
			t.Logf("n=%d recall@10=%.4f; of float32's top 10: Exact %.4f, Search %.4f", len(vs), got, exact, search)
			if got < 0.98 {
				t.Errorf("recall@10 = %.4f, want >= 0.98", got)
			}
			if exact < 0.99 || search < 0.98 {
				t.Errorf("of float32's top 10, Exact finds %.4f (want >= 0.99), Search %.4f (want >= 0.98)", exact, search)
			}
		})
	}
}

// TestDeleteAndReAdd deletes 20% and re-adds half of those with new
// vectors; vacuums run on the way (every 10% of tombstones).
func TestDeleteAndReAdd(t *testing.T) {
	for _, kind := range dataKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			n := testN()
			r := rand.New(rand.NewPCG(2, 2))
			vs, qs := kind.gen(r, n), kind.gen(r, sized(200, 100))
			idx := New(dim, kind.opt)
			build(t, idx, vs)

			deleted := map[string]bool{}
			for _, i := range r.Perm(n)[:n/5] {
				if !idx.Delete(idOf(i)) {
					t.Fatalf("Delete(%s) = false", idOf(i))
				}
				deleted[idOf(i)] = true
			}
			if idx.Len() != n-n/5 {
				t.Fatalf("Len = %d, want %d", idx.Len(), n-n/5)
			}
			check := func(stage string) {
				t.Helper()
				checkGraph(t, idx)
				for _, q := range qs {
					for _, res := range idx.Search(q, 50) {
						if deleted[res.ID] {
							t.Fatalf("%s: Search returned deleted %s", stage, res.ID)
						}
					}
				}
				got := recallAt(idx, qs, 10)
				t.Logf("%s: live=%d dead=%d free=%d recall@10=%.4f", stage, idx.Len(), idx.dead, len(idx.free), got)
				if got < 0.97 {
					t.Errorf("%s: recall@10 = %.4f, want >= 0.97", stage, got)
				}
			}
			check("after deleting 20%")

			half, i := len(deleted)/2, 0
			for id := range sortedKeys(deleted) {
				if i++; i > half {
					break
				}
				if err := idx.Add(id, kind.gen(r, 1)[0]); err != nil {
					t.Fatal(err)
				}
				delete(deleted, id)
			}
			check("after re-adding half")
		})
	}
}

func sortedKeys(m map[string]bool) func(func(string) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Values(keys)
}

func TestReAddDeletedID(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 3))
	idx := New(dim, Options{ExactBelow: -1})
	build(t, idx, skewedVecs(r, 300))
	for round := range 3 {
		if !idx.Delete("r7") {
			t.Fatalf("round %d: Delete = false", round)
		}
		if idx.Delete("r7") {
			t.Fatalf("round %d: second Delete = true", round)
		}
		if res := idx.Search(idx.decoded(entryOf(idx.top.Load()), new([]float32)), 300); slices.ContainsFunc(res, func(r Result) bool { return r.ID == "r7" }) {
			t.Fatalf("round %d: deleted r7 found", round)
		}
		v := skewedVecs(r, 1)[0]
		if err := idx.Add("r7", v); err != nil {
			t.Fatal(err)
		}
		if idx.Len() != 300 {
			t.Fatalf("round %d: Len = %d, want 300", round, idx.Len())
		}
		res := idx.Search(v, 1)
		if len(res) != 1 || res[0].ID != "r7" || math.Abs(float64(res[0].Score)-1) > roundingTol {
			t.Fatalf("round %d: Search(own vector) = %v, want r7 at 1", round, res)
		}
		// Add over a live id replaces the vector.
		v = skewedVecs(r, 1)[0]
		if err := idx.Add("r7", v); err != nil {
			t.Fatal(err)
		}
		if res := idx.Search(v, 1); res[0].ID != "r7" || idx.Len() != 300 {
			t.Fatalf("round %d: after replacing, Search = %v, Len = %d", round, res, idx.Len())
		}
	}
	checkGraph(t, idx)
}

func TestDeleteEverythingAndStartAgain(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 4))
	idx := New(dim, Options{ExactBelow: -1})
	vs := skewedVecs(r, 500)
	for round := range 3 {
		build(t, idx, vs)
		if got := recallAt(idx, vs[:50], 10); got < 0.98 {
			t.Errorf("round %d: recall@10 = %.4f", round, got)
		}
		for i := range vs {
			idx.Delete(idOf(i))
		}
		if idx.Len() != 0 || idx.Search(vs[0], 10) != nil {
			t.Fatalf("round %d: Len = %d after deleting everything", round, idx.Len())
		}
		checkGraph(t, idx)
	}
}

func TestWrongInput(t *testing.T) {
	t.Parallel()
	idx := New(dim, Options{})
	good := skewedVecs(rand.New(rand.NewPCG(5, 5)), 1)[0]
	nan := slices.Clone(good)
	nan[3] = float32(math.NaN())
	inf := slices.Clone(good)
	inf[3] = float32(math.Inf(-1))
	for _, c := range []struct {
		id   string
		vec  []float32
		want error
	}{
		{"short", good[:dim-1], ErrDimension},
		{"long", append(slices.Clone(good), 0), ErrDimension},
		{"nil", nil, ErrDimension},
		{"zero", make([]float32, dim), ErrVector},
		{"nan", nan, ErrVector},
		{"inf", inf, ErrVector},
		{"", good, ErrID},
	} {
		if err := idx.Add(c.id, c.vec); !errors.Is(err, c.want) {
			t.Errorf("Add(%q) = %v, want %v", c.id, err, c.want)
		}
	}
	if idx.Len() != 0 {
		t.Fatalf("Len = %d after rejected adds", idx.Len())
	}
	if err := idx.Add("ok", good); err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float32{good[:10], append(slices.Clone(good), 1), nil, make([]float32, dim), nan} {
		if res := idx.Search(q, 5); res != nil {
			t.Errorf("Search(len %d) = %v, want nil", len(q), res)
		}
		if res := idx.Exact(q, 5); res != nil {
			t.Errorf("Exact(len %d) = %v, want nil", len(q), res)
		}
	}
	if res := idx.Search(good, 0); res != nil {
		t.Errorf("Search(k=0) = %v", res)
	}
	if res := idx.Search(good, 5); len(res) != 1 || res[0].ID != "ok" {
		t.Errorf("Search = %v, want [ok]", res)
	}
}

// TestSmallIsExact: below ExactBelow, Search is Exact, ties and all.
func TestSmallIsExact(t *testing.T) {
	t.Parallel()
	if New(dim, Options{}).exactBelow != DefaultExactBelow {
		t.Fatal("ExactBelow does not default to DefaultExactBelow")
	}
	r := rand.New(rand.NewPCG(6, 6))
	const below = 300
	idx := New(dim, Options{ExactBelow: below})
	vs := uniformVecs(r, below-10)
	build(t, idx, vs)
	// Equal scores: the same vector under three more ids.
	for _, id := range []string{"tie-c", "tie-a", "tie-b"} {
		if err := idx.Add(id, vs[0]); err != nil {
			t.Fatal(err)
		}
	}
	idx.Delete("r1")
	idx.Delete("r2")
	if idx.Len() >= below {
		t.Fatalf("Len = %d, not below ExactBelow", idx.Len())
	}
	for i, q := range append(uniformVecs(r, 50), vs[0]) {
		for _, k := range []int{1, 10, 100} {
			got, want := idx.Search(q, k), idx.Exact(q, k)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("query %d k=%d: Search differs from Exact:\n%v\n%v", i, k, got, want)
			}
		}
	}
	got := idx.Search(vs[0], 4)
	if ids := []string{got[0].ID, got[1].ID, got[2].ID, got[3].ID}; !slices.Equal(ids, []string{"r0", "tie-a", "tie-b", "tie-c"}) {
		t.Errorf("equal scores come as %v, want by id", ids)
	}
	if n := len(idx.Search(vs[0], 1_000_000)); n != idx.Len() {
		t.Errorf("k above Len: %d results, want %d", n, idx.Len())
	}
}

// TestGraphTies: the graph path orders equal scores by id too.
func TestGraphTies(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	idx := New(dim, Options{ExactBelow: -1})
	vs := skewedVecs(r, 1000)
	build(t, idx, vs)
	for _, id := range []string{"z", "b", "y", "a"} {
		if err := idx.Add(id, vs[5]); err != nil {
			t.Fatal(err)
		}
	}
	got := idx.Search(vs[5], 5)
	var ids []string
	for _, g := range got {
		ids = append(ids, g.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "r5", "y", "z"}) {
		t.Errorf("Search = %v, want a b r5 y z", ids)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(8, 8))
	vs, qs := skewedVecs(r, sized(1000, 500)), skewedVecs(r, 50)
	run := func(seed int64) (*Index, [][]Result) {
		idx := New(dim, Options{ExactBelow: -1, Seed: seed})
		build(t, idx, vs)
		for i := 0; i < len(vs); i += 7 {
			idx.Delete(idOf(i))
		}
		for i := 0; i < len(vs); i += 14 {
			if err := idx.Add(idOf(i), vs[(i+1)%len(vs)]); err != nil {
				t.Fatal(err)
			}
		}
		var out [][]Result
		for _, q := range qs {
			out = append(out, idx.Search(q, 10))
		}
		return idx, out
	}
	a, ra := run(42)
	b, rb := run(42)
	if !reflect.DeepEqual(ra, rb) {
		t.Error("the same seed gave different results")
	}
	if !reflect.DeepEqual(a.l0, b.l0) || !reflect.DeepEqual(a.nodes, b.nodes) {
		t.Error("the same seed gave different graphs")
	}
	// Layer 0 may well come out the same: at this size the wide beam of
	// insertion finds the same neighbours whatever the path down.
	c, _ := run(43)
	if reflect.DeepEqual(a.nodes, c.nodes) {
		t.Error("another seed gave the same levels")
	}
}

// TestConcurrent runs searches while two writers add, replace and
// delete; -race checks the locking, and the readers must keep going.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 9))
	n, writes := sized(1000, 500), sized(400, 200)
	vs := skewedVecs(r, n)
	extra := skewedVecs(r, 400)
	qs := skewedVecs(r, 50)
	idx := New(dim, Options{ExactBelow: -1})
	build(t, idx, vs)

	var writers, readers sync.WaitGroup
	done := make(chan struct{})
	var searches atomic.Int64
	var slowest atomic.Int64
	for w := range 2 {
		writers.Go(func() {
			for i := range writes {
				id := idOf((i*2 + w) % n)
				switch i % 4 {
				case 0, 1:
					if err := idx.Add(id, extra[(i*2+w)%len(extra)]); err != nil {
						t.Error(err)
						return
					}
				case 2:
					idx.Delete(id)
				case 3:
					if err := idx.Add(fmt.Sprintf("w%d-%d", w, i), extra[i%len(extra)]); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	for range 2 {
		readers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				start := time.Now()
				res := idx.Search(qs[i%len(qs)], 10)
				slowest.Store(max(slowest.Load(), int64(time.Since(start))))
				searches.Add(1)
				if len(res) != 10 || !slices.IsSortedFunc(res, compareResults) {
					t.Errorf("Search = %v", res)
					return
				}
				for j := 1; j < len(res); j++ {
					if res[j].ID == res[j-1].ID {
						t.Errorf("duplicate %s", res[j].ID)
						return
					}
				}
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	t.Logf("%d searches alongside %d writes, slowest %v", searches.Load(), 2*writes, time.Duration(slowest.Load()))
	if searches.Load() < 100 {
		t.Errorf("only %d searches ran alongside the writes", searches.Load())
	}
	idx.vacuum()
	checkGraph(t, idx)
	if got := recallAt(idx, qs, 10); got < 0.97 {
		t.Errorf("recall@10 after the writes = %.4f", got)
	}
}

// checkGraph checks the invariants of the graph: links point to slots in
// use, of high enough a level, without duplicates or self-links, within
// the caps; the counts add up; and (nearly) every live node can be reached
// from the entry point.
func checkGraph(t *testing.T, x *Index) {
	t.Helper()
	x.mu.RLock()
	defer x.mu.RUnlock()
	var nLive, nDead int
	for s, nd := range x.nodes {
		switch x.stateOf(uint32(s)) {
		case pending:
			t.Fatalf("slot %d is still pending", s)
		case free:
			if x.l0.at(uint32(s))[0] != 0 || nd.upper != nil {
				t.Fatalf("free slot %d has links", s)
			}
			continue
		case live:
			nLive++
			if x.ids[nd.id] != uint32(s) {
				t.Fatalf("slot %d: id %q maps to %d", s, nd.id, x.ids[nd.id])
			}
		case dead:
			nDead++
		}
		for l := 0; l <= int(nd.level); l++ {
			ls := x.links(uint32(s), l)
			mmax := x.m
			if l == 0 {
				mmax = x.m0
			}
			if len(ls) > mmax {
				t.Fatalf("slot %d layer %d: %d links, cap %d", s, l, len(ls), mmax)
			}
			seen := map[uint32]bool{}
			for _, o := range ls {
				switch {
				case o == uint32(s):
					t.Fatalf("slot %d links itself", s)
				case seen[o]:
					t.Fatalf("slot %d links %d twice", s, o)
				case x.stateOf(o) == free:
					t.Fatalf("slot %d layer %d links free slot %d", s, l, o)
				case int(x.nodes[o].level) < l:
					t.Fatalf("slot %d layer %d links %d of level %d", s, l, o, x.nodes[o].level)
				}
				seen[o] = true
			}
		}
	}
	if nLive != x.Len() || nDead != x.dead || len(x.ids) != nLive {
		t.Fatalf("counts: %d live, %d dead, %d ids; index says %d, %d", nLive, nDead, len(x.ids), x.Len(), x.dead)
	}
	if nLive == 0 {
		return
	}
	entry, maxLevel := entryOf(x.top.Load()), topLevel(x.top.Load())
	if x.stateOf(entry) != live || int(x.nodes[entry].level) != maxLevel {
		t.Fatalf("entry %d is %v of level %d, max level %d", entry, x.stateOf(entry), x.nodes[entry].level, maxLevel)
	}
	seen := make([]bool, len(x.nodes))
	seen[entry] = true
	queue := []uint32{entry}
	reached := 0
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if x.stateOf(s) == live {
			reached++
		}
		for _, o := range x.links(s, 0) {
			if !seen[o] {
				seen[o] = true
				queue = append(queue, o)
			}
		}
	}
	if lost := nLive - reached; lost*1000 > nLive {
		t.Errorf("%d of %d live nodes cannot be reached from the entry point", lost, nLive)
	}
}

// TestOddDimension: the dot products handle a dimension that is not a
// multiple of four, and graph and exact scores agree bit for bit.
func TestOddDimension(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(10, 10))
	const d = 7
	idx := New(d, Options{ExactBelow: -1})
	var qs [][]float32
	for i := range 300 {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		if i < 20 {
			qs = append(qs, v)
		}
		if err := idx.Add(idOf(i), v); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range qs {
		got, want := idx.Search(q, 3), idx.Exact(q, 3)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Search = %v, Exact = %v", got, want)
		}
	}
}

// TestDeleteRegion deletes a whole neighbourhood at once, as when a
// catalog whose vectors sit together is withdrawn: the nodes around it
// must stay reachable, and searches into the hole must still find the
// nearest survivors.
func TestDeleteRegion(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 11))
	vs := skewedVecs(r, testN()*3/5)
	idx := New(dim, Options{ExactBelow: -1})
	build(t, idx, vs)
	centre := vs[0]
	for _, res := range idx.Exact(centre, len(vs)*3/10) {
		idx.Delete(res.ID)
	}
	idx.vacuum()
	if idx.dead != 0 {
		t.Fatalf("%d tombstones left after a vacuum", idx.dead)
	}
	checkGraph(t, idx)
	// Queries around the hole.
	qs := make([][]float32, 50)
	for i := range qs {
		q := slices.Clone(centre)
		for j, f := range skewedVecs(r, 1)[0] {
			q[j] += 0.3 * f
		}
		qs[i] = q
	}
	got := recallAt(idx, qs, 10)
	t.Logf("recall@10 next to the deleted region: %.4f", got)
	if got < 0.98 {
		t.Errorf("recall@10 next to the deleted region = %.4f, want >= 0.98", got)
	}
}
