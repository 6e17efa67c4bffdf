package ingest_test

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
)

// gcPercent reads the garbage collector's target without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// gcWatch records GOGC whenever a part of a change is prepared.
type gcWatch struct {
	mu   sync.Mutex
	seen []int
}

func (w *gcWatch) index(ix ports.TextIndex) *partsIndex {
	return &partsIndex{TextIndex: ix, part: func([]core.Resource) {
		w.mu.Lock()
		w.seen = append(w.seen, gcPercent())
		w.mu.Unlock()
	}}
}

// TestBulkChangeLowersGOGCWhileApplied: a change of several index chunks
// is applied with the bulk target, every chunk of it, and the process's
// own target is back once it answers; a change of one chunk keeps the
// process's own throughout; and a process whose GOGC is lower keeps it.
func TestBulkChangeLowersGOGCWhileApplied(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx := context.Background()
	store, index := storeAndIndex(t)
	w := &gcWatch{}
	svc := ingest.New(ingest.Config{IndexChunk: 10, BatchChunk: -1, BulkGCPercent: 37}, store, w.index(index), core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	release := func(version string, n int) core.Release {
		rel := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: version}
		for i := range n {
			v := float64(i)
			rel.Resources = append(rel.Resources, core.Resource{ID: fmt.Sprintf("#B%03d", i), NameDA: fmt.Sprintf("Blok %s %d", version, i), Unit: "kg", A1A3: &v})
		}
		return rel
	}
	apply := func(rel core.Release) []int {
		t.Helper()
		w.seen = nil
		if _, err := svc.Apply(ctx, rel); err != nil {
			t.Fatal(err)
		}
		return w.seen
	}
	if seen := apply(release("one", 10)); fmt.Sprint(seen) != "[100]" || gcPercent() != 100 {
		t.Fatalf("one chunk: GOGC %v while applied, %d after; want [100], 100", seen, gcPercent())
	}
	if seen := apply(release("three", 25)); fmt.Sprint(seen) != "[37 37 37]" || gcPercent() != 100 {
		t.Fatalf("three chunks: GOGC %v while applied, %d after; want [37 37 37], 100", seen, gcPercent())
	}
	// A batch larger than one index chunk is still one change (BatchChunk):
	// its size bounds its memory, and it keeps the process's own target.
	batches := ingest.New(ingest.Config{IndexChunk: 10, BatchChunk: 30, BulkGCPercent: 37}, store, w.index(index), core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	w.seen = nil
	if _, err := batches.Apply(ctx, release("batch", 25)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(w.seen) != "[100]" || gcPercent() != 100 {
		t.Fatalf("a batch of 25 (BatchChunk 30): GOGC %v while applied, %d after; want [100], 100", w.seen, gcPercent())
	}
	w.seen = nil
	if _, err := batches.Apply(ctx, release("more", 35)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(w.seen) != "[37 37 37 37]" || gcPercent() != 100 {
		t.Fatalf("a release of 35 (BatchChunk 30): GOGC %v while applied, %d after; want [37 37 37 37], 100", w.seen, gcPercent())
	}
	debug.SetGCPercent(20) // as GOGC=20 in the environment
	store, index = storeAndIndex(t)
	svc = ingest.New(ingest.Config{IndexChunk: 10, BatchChunk: -1, BulkGCPercent: 37}, store, w.index(index), core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	if seen := apply(release("lower", 25)); fmt.Sprint(seen) != "[20 20 20]" || gcPercent() != 20 {
		t.Fatalf("GOGC 20: %v while applied, %d after; want [20 20 20], 20", seen, gcPercent())
	}
}

// TestBulkGCOverlappingChanges: two large changes of two catalogs applied
// at once restore the process's own target only when both are done.
func TestBulkGCOverlappingChanges(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx := context.Background()
	store, index := storeAndIndex(t)
	first := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	w := &partsIndex{TextIndex: index, part: func(upsert []core.Resource) {
		if len(upsert) > 0 && upsert[0].Catalog == core.National {
			once.Do(func() { close(first); <-release })
		}
	}}
	svc := ingest.New(ingest.Config{IndexChunk: 10, BatchChunk: -1, BulkGCPercent: 37}, store, w, core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	rel := func(c core.CatalogID, n int) core.Release {
		r := core.Release{Catalog: c, Origin: core.OriginFile, Version: "v"}
		for i := range n {
			v := 1.0
			r.Resources = append(r.Resources, core.Resource{ID: fmt.Sprintf("%d", 7000000+i), NameSV: fmt.Sprint("Sten ", i), NameDA: fmt.Sprint("Sten ", i), Unit: "kg", A1A3: &v})
		}
		return r
	}
	errs := make(chan error, 1)
	go func() { // held inside its first Prepare
		_, err := svc.Apply(ctx, rel(core.National, 25))
		errs <- err
	}()
	<-first
	if _, err := svc.Apply(ctx, rel(core.DKBR, 25)); err != nil {
		t.Fatal(err)
	}
	if p := gcPercent(); p != 37 {
		t.Fatalf("GOGC %d while the other large change runs, want 37", p)
	}
	close(release)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if p := gcPercent(); p != 100 {
		t.Fatalf("GOGC %d after both, want 100", p)
	}
}
