package ingest_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
)

// watchedIndex counts the resources its index prepares and tells when a
// change is built.
type watchedIndex struct {
	ports.TextIndex
	prepared atomic.Int64
	built    chan struct{}
}

func (w *watchedIndex) Prepare(ctx context.Context, upsert []core.Resource, remove []core.Key) (ports.IndexChange, error) {
	w.prepared.Add(int64(len(upsert)))
	c, err := w.TextIndex.Prepare(ctx, upsert, remove)
	if err != nil {
		return nil, err
	}
	return &watchedChange{IndexChange: c, built: w.built}, nil
}

type watchedChange struct {
	ports.IndexChange
	built chan struct{}
}

func (c *watchedChange) Build() error {
	err := c.IndexChange.Build()
	c.built <- struct{}{}
	return err
}

// TestBatchPreparedWholeBeforeItsPublication applies a batch larger than
// the index chunk (50 resources, chunks of 7) while a reader holds every
// publication back: the whole batch is analysed and built beside the
// reader, so readers wait only for its store write and swap. Indexed in
// parts (BatchChunk -1, as before), only the first part is, and the
// others wait for the publication.
func TestBatchPreparedWholeBeforeItsPublication(t *testing.T) {
	const n = 50
	for _, tc := range []struct {
		name       string
		batchChunk int
		beside     int64 // resources prepared before the publication
	}{{"one change", 0, n}, {"in parts", -1, 7}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, index := storeAndIndex(t)
			vis := core.NewVisibility()
			w := &watchedIndex{TextIndex: index, built: make(chan struct{}, n)}
			svc := ingest.New(ingest.Config{IndexChunk: 7, BatchChunk: tc.batchChunk}, store, w, vis, nil, noEvents{}, ingest.Sources{}, quiet)
			rel := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "B1"}
			for i := range n {
				v := float64(i)
				rel.Resources = append(rel.Resources, core.Resource{ID: fmt.Sprintf("#B%03d", i),
					NameDA: fmt.Sprintf("Prøvebjælke model %d", i), Unit: "kg", A1A3: &v})
			}

			held, release := make(chan struct{}), make(chan struct{})
			go func() {
				_ = vis.Read(nil, func() error { close(held); <-release; return nil })
			}()
			<-held
			applied := make(chan error, 1)
			go func() { _, err := svc.Apply(ctx, rel); applied <- err }()
			<-w.built // the first (or only) change is built; the publication waits for the reader
			beside := w.prepared.Load()
			close(release)
			if err := <-applied; err != nil {
				t.Fatal(err)
			}
			if beside != tc.beside {
				t.Errorf("%d resources prepared before the publication, want %d", beside, tc.beside)
			}
			hits, err := index.Search(ctx, core.TextQuery{Text: "prøvebjælke", Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != n {
				t.Errorf("after the batch the index finds %d of its %d resources", len(hits), n)
			}
		})
	}
}
