package hnsw

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestEntryStaysOnTop: while the entry point is deleted again and again
// and new nodes are inserted beside it, the entry point stays a live node
// of the highest level of any live node. An insert that started under an
// entry deleted meanwhile used to leave a higher live node below a lower
// entry, and a vacuum's repair of that node then searched its upper layers
// from a node without them (a panic seen in CI).
func TestEntryStaysOnTop(t *testing.T) {
	rounds := sized(40, 10)
	for round := range rounds {
		r := rand.New(rand.NewPCG(uint64(round), 11))
		x := New(dim, Options{ExactBelow: -1, Seed: int64(round)})
		vs := skewedVecs(r, 600)
		items := make([]Item, 200)
		for i := range items {
			items[i] = Item{ID: idOf(i), Vec: vs[i]}
		}
		if err := x.AddBatch(items); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { // delete whatever is the entry, 100 times
			for range 100 {
				x.mu.RLock()
				id := x.nodes[entryOf(x.top.Load())].id
				x.mu.RUnlock()
				x.Delete(id)
			}
		})
		wg.Go(func() { // insert beside it
			for b := range 10 {
				batch := make([]Item, 40)
				for i := range batch {
					batch[i] = Item{ID: fmt.Sprintf("n%d-%d", b, i), Vec: vs[200+(b*40+i)%400]}
				}
				if err := x.AddBatch(batch); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Wait()
		checkTop(t, x)
		x.vacuum()
		checkTop(t, x)
		checkGraph(t, x)
	}
}

// checkTop fails unless the entry point is a live node at the highest
// level of any live node.
func checkTop(t *testing.T, x *Index) {
	t.Helper()
	x.mu.RLock()
	defer x.mu.RUnlock()
	top := x.top.Load()
	highest := -1
	for s := range int(x.used.Load()) {
		if x.stateOf(uint32(s)) == live {
			highest = max(highest, int(x.nodes[s].level))
		}
	}
	if highest < 0 {
		return
	}
	e := entryOf(top)
	if x.stateOf(e) != live || int(x.nodes[e].level) != topLevel(top) || topLevel(top) != highest {
		t.Fatalf("entry %d (state %d, level %d) at top level %d; highest live level %d", e, x.stateOf(e), x.nodes[e].level, topLevel(top), highest)
	}
}
