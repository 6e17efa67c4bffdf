package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
)

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
	otherPrepared := make(chan struct{})
	between := func() { // once the large change takes its second part
		other := core.Release{Catalog: core.National, Origin: core.OriginFile, Version: "N1"}
		for i := range 3 {
			v := float64(i)
			other.Resources = append(other.Resources, core.Resource{ID: fmt.Sprintf("N%d", i), NameSV: fmt.Sprintf("Kalkputs %d", i), Unit: "kg", A1A3: &v})
		}
		go func() { _, err := svc.Apply(ctx, other); otherDone <- err }()
		select { // the other change prepared in the gap, if there is one
		case <-otherPrepared:
		case <-time.After(300 * time.Millisecond):
		}
	}
	largeParts := 0
	g := &partsIndex{TextIndex: index,
		part: func(upsert []core.Resource) {
			if len(upsert) > 0 && upsert[0].Catalog == core.DKBR {
				if largeParts++; largeParts == 2 {
					between()
				}
			}
		},
		prepared: func(upsert []core.Resource) {
			if len(upsert) > 0 && upsert[0].Catalog == core.National {
				close(otherPrepared)
			}
		},
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
