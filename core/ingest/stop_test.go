package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/ingest"
)

// stuckEmbedder never answers before its caller gives up: an embedding
// service that hangs.
type stuckEmbedder struct{ called chan struct{} }

func (stuckEmbedder) ID() string { return "stuck" }
func (stuckEmbedder) Dim() int   { return 4 }
func (e stuckEmbedder) EmbedDocuments(ctx context.Context, _ []string) ([][]float32, error) {
	select {
	case e.called <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}
func (e stuckEmbedder) EmbedQuery(ctx context.Context, _ string) ([]float32, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStopEndsTheBackgroundVectors: an ingest too large to embed before it
// answers queues its vectors in the background; Stop ends that queue, so
// the process's stop (and the index kept at it) does not wait for an
// embedding that may take minutes, or never end.
func TestStopEndsTheBackgroundVectors(t *testing.T) {
	ctx := context.Background()
	store, index := storeAndIndex(t)
	emb := stuckEmbedder{called: make(chan struct{}, 1)}
	vec := embedding.New(emb, store, hnsw.NewCatalogIndex(emb.Dim()), store, quiet)
	svc := ingest.New(ingest.Config{}, store, index, core.NewVisibility(), vec, noEvents{}, ingest.Sources{}, quiet)

	rel := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "R1"}
	for i := range 2500 { // above the limit embedded before the answer
		v := float64(i)
		rel.Resources = append(rel.Resources, core.Resource{ID: fmt.Sprintf("#S%04d", i), NameDA: fmt.Sprintf("Sten %d", i), Unit: "kg", A1A3: &v})
	}
	if _, err := svc.Apply(ctx, rel); err != nil {
		t.Fatal(err)
	}
	<-emb.called // the background queue is embedding
	svc.Stop()
	done := make(chan struct{})
	go func() { svc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a deadlock guard, not a measure
		t.Fatal("Wait did not return after Stop while the background vectors were embedding")
	}
}
