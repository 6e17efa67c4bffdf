package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
)

// gapIndex calls between once, when a dkbr change takes its second part
// (a second Prepare, or an Extend), and signals otherPrepared when a
// national change has been prepared.
type gapIndex struct {
	ports.TextIndex
	dkbrParts     int
	between       func()
	otherPrepared chan struct{}
}

func (g *gapIndex) part() {
	if g.dkbrParts++; g.dkbrParts == 2 {
		g.between()
	}
}

func (g *gapIndex) Prepare(ctx context.Context, upsert []core.Resource, remove []core.Key) (ports.IndexChange, error) {
	dkbr := len(upsert) > 0 && upsert[0].Catalog == core.DKBR
	if dkbr {
		g.part()
	}
	c, err := g.TextIndex.Prepare(ctx, upsert, remove)
	if err != nil {
		return nil, err
	}
	if !dkbr {
		close(g.otherPrepared)
		return c, nil
	}
	return gapChange{IndexChange: c, g: g}, nil
}

type gapChange struct {
	ports.IndexChange
	g *gapIndex
}

func (c gapChange) Extend(ctx context.Context, upsert []core.Resource, remove []core.Key) error {
	c.g.part()
	return c.IndexChange.Extend(ctx, upsert, remove)
}

// TestLargeChangeBesideAnotherCatalogsChange: a change of several index
// chunks and another catalog's change that arrives while the first is
// between two of its chunks both apply. The index's write lock is held
// from the first chunk to the commit: when each chunk was committed and
// the next prepared, inside the first change's publication, the other
// change could take the lock in between and then wait for that
// publication, which waited for the lock.
func TestLargeChangeBesideAnotherCatalogsChange(t *testing.T) {
	ctx := context.Background()
	store, index := storeAndIndex(t)
	otherDone := make(chan error, 1)
	var svc *ingest.Service
	g := &gapIndex{TextIndex: index, otherPrepared: make(chan struct{})}
	g.between = func() {
		other := core.Release{Catalog: core.National, Origin: core.OriginFile, Version: "N1"}
		for i := range 3 {
			v := float64(i)
			other.Resources = append(other.Resources, core.Resource{ID: fmt.Sprintf("N%d", i), NameSV: fmt.Sprintf("Kalkputs %d", i), Unit: "kg", A1A3: &v})
		}
		go func() { _, err := svc.Apply(ctx, other); otherDone <- err }()
		select { // the other change prepared in the gap, if there is one
		case <-g.otherPrepared:
		case <-time.After(300 * time.Millisecond):
		}
	}
	svc = ingest.New(ingest.Config{IndexChunk: 10, BatchChunk: -1}, store, g, core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	large := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "D1"}
	for i := range 25 {
		v := float64(i)
		large.Resources = append(large.Resources, core.Resource{ID: fmt.Sprintf("#D%03d", i), NameDA: fmt.Sprintf("Murblok %d", i), Unit: "kg", A1A3: &v})
	}
	largeDone := make(chan error, 1)
	go func() { _, err := svc.Apply(ctx, large); largeDone <- err }()
	for _, done := range []chan error{largeDone, otherDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			// The test's cleanups would wait for the index, which the
			// stuck changes hold: end the process from another goroutine.
			go panic("the two changes wait for each other: deadlock")
			select {}
		}
	}
	for q, want := range map[string]int{"murblok": 25, "kalkputs": 3} {
		if hits, err := index.Search(ctx, core.TextQuery{Text: q, Limit: 100}); err != nil || len(hits) != want {
			t.Errorf("%q finds %d (%v), want %d", q, len(hits), err, want)
		}
	}
}
