package hnsw

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

func init() {
	buildModes = append(buildModes, struct {
		name  string
		build func(*testing.B, *Index, [][]float32)
	}{"batch", func(b *testing.B, x *Index, vs [][]float32) {
		if err := x.AddBatch(items(vs, 0)); err != nil {
			b.Fatal(err)
		}
	}})
}

func items(vs [][]float32, first int) []Item {
	out := make([]Item, len(vs))
	for i, v := range vs {
		out[i] = Item{idOf(first + i), v}
	}
	return out
}

// TestAddBatch builds the recall test's skewed index with AddBatch (as
// many goroutines inserting at once as GOMAXPROCS) and expects the same
// recall as one Add after the other.
func TestAddBatch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	vs, qs := skewedVecs(r, testN()), skewedVecs(r, sized(200, 100))
	idx := New(dim, Options{ExactBelow: -1})
	if err := idx.AddBatch(items(vs, 0)); err != nil {
		t.Fatal(err)
	}
	if idx.Len() != len(vs) {
		t.Fatalf("Len = %d, want %d", idx.Len(), len(vs))
	}
	checkGraph(t, idx)
	got := recallAt(idx, qs, 10)
	t.Logf("n=%d recall@10=%.4f", len(vs), got)
	if got < 0.98 {
		t.Errorf("recall@10 = %.4f, want >= 0.98", got)
	}
}

// TestAddBatchItems: invalid items are reported and skipped, a repeated id
// keeps its last vector, an unchanged vector is a no-op, and a changed one
// replaces the old.
func TestAddBatchItems(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(12, 12))
	vs := skewedVecs(r, 300)
	idx := New(dim, Options{ExactBelow: -1})
	if err := idx.AddBatch(items(vs[:200], 0)); err != nil {
		t.Fatal(err)
	}
	batch := append(items(vs[200:], 200),
		Item{"", vs[0]},
		Item{"short", vs[0][:3]},
		Item{"zero", make([]float32, dim)},
		Item{"r5", vs[5]},     // unchanged
		Item{"r6", vs[299]},   // replaced...
		Item{"r250", vs[6]},   // ...and r250 twice:
		Item{"r250", vs[250]}, // the last wins
	)
	err := idx.AddBatch(batch)
	for _, want := range []error{ErrID, ErrDimension, ErrVector} {
		if !errors.Is(err, want) {
			t.Errorf("AddBatch error %v, want it to include %v", err, want)
		}
	}
	if idx.Len() != 300 {
		t.Fatalf("Len = %d, want 300", idx.Len())
	}
	for _, c := range []struct {
		id  string
		vec []float32
	}{{"r5", vs[5]}, {"r6", vs[299]}, {"r250", vs[250]}} {
		res := idx.Search(c.vec, 2)
		if !slices.ContainsFunc(res, func(r Result) bool { return r.ID == c.id && r.Score > 1-roundingTol }) {
			t.Errorf("Search(vector of %s) = %v", c.id, res)
		}
	}
	if idx.dead != 1 {
		t.Errorf("%d tombstones, want 1 (the replaced r6)", idx.dead)
	}
	checkGraph(t, idx)
}

// TestAddBatchConcurrent replaces and adds vectors with AddBatch while
// searches and deletes run; -race checks the locking.
func TestAddBatchConcurrent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 13))
	n := sized(2000, 600)
	vs, fresh, qs := skewedVecs(r, n), skewedVecs(r, n), skewedVecs(r, 50)
	idx := New(dim, Options{ExactBelow: -1})
	if err := idx.AddBatch(items(vs, 0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	var searches atomic.Int64
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			res := idx.Search(qs[i%len(qs)], 10)
			searches.Add(1)
			for j := 1; j < len(res); j++ {
				if res[j].ID == res[j-1].ID {
					t.Errorf("duplicate %s", res[j].ID)
					return
				}
			}
		}
	})
	wg.Go(func() {
		for i := 0; i < n; i += 7 {
			idx.Delete(idOf(i))
		}
	})
	// Replace the first half, add as many new ones.
	batch := append(items(fresh[:n/2], 0), items(fresh[n/2:], n)...)
	if err := idx.AddBatch(batch); err != nil {
		t.Error(err)
	}
	close(done)
	wg.Wait()
	t.Logf("%d searches alongside", searches.Load())
	idx.vacuum()
	checkGraph(t, idx)
	if got := recallAt(idx, qs, 10); got < 0.97 {
		t.Errorf("recall@10 after the batch = %.4f", got)
	}
}

// TestCatalogUpsertMany: vectors go to their catalog's index, invalid ones
// are counted out and reported, and a cancelled context stops the load.
func TestCatalogUpsertMany(t *testing.T) {
	t.Parallel()
	vs := skewedVecs(rand.New(rand.NewPCG(14, 14)), 3000)
	c := NewCatalogIndex(dim)
	var rows []ports.StoredVector
	for i, v := range vs {
		cat := core.National
		if i%3 == 0 {
			cat = core.DKBR
		}
		rows = append(rows, ports.StoredVector{Key: core.Key{Catalog: cat, ID: idOf(i)}, Vec: v})
	}
	rows = append(rows, ports.StoredVector{Key: core.Key{Catalog: core.National, ID: "bad"}, Vec: make([]float32, dim)})
	n, err := c.UpsertMany(context.Background(), rows)
	if n != len(vs) || !errors.Is(err, ErrVector) {
		t.Fatalf("UpsertMany = %d, %v; want %d and ErrVector", n, err, len(vs))
	}
	if c.Len() != len(vs) || c.index(core.DKBR, false).Len() != len(vs)/3 {
		t.Fatalf("Len = %d, DKBR %d", c.Len(), c.index(core.DKBR, false).Len())
	}
	res, _ := c.Search(context.Background(), vs[3], []core.CatalogID{core.DKBR}, 1)
	if len(res) != 1 || res[0].Key.ID != idOf(3) {
		t.Errorf("Search = %v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := NewCatalogIndex(dim).UpsertMany(ctx, rows); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled UpsertMany = %d, %v", n, err)
	}
}
