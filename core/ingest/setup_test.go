package ingest_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

type noEvents struct{}

func (noEvents) Publish(context.Context, core.Event) error { return nil }

// quiet is a logger that writes nothing.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// storeAndIndex opens a badger store in a temporary directory and an
// in-memory index, both closed when the test ends.
func storeAndIndex(t *testing.T) (*badgerstore.Store, *blugeindex.Index) {
	t.Helper()
	store, err := badgerstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	index, err := blugeindex.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = index.Close() })
	return store, index
}

// partsIndex is an index that calls part before each part of a change is
// prepared (Prepare, then each Extend) and, when set, prepared once a
// Prepare has returned: what tests watch of the ingest's index work.
type partsIndex struct {
	ports.TextIndex
	part     func(upsert []core.Resource)
	prepared func(upsert []core.Resource)
}

func (p *partsIndex) Prepare(ctx context.Context, upsert []core.Resource, remove []core.Key) (ports.IndexChange, error) {
	p.part(upsert)
	c, err := p.TextIndex.Prepare(ctx, upsert, remove)
	if err != nil {
		return nil, err
	}
	if p.prepared != nil {
		p.prepared(upsert)
	}
	return partsChange{IndexChange: c, p: p}, nil
}

type partsChange struct {
	ports.IndexChange
	p *partsIndex
}

func (c partsChange) Extend(ctx context.Context, upsert []core.Resource, remove []core.Key) error {
	c.p.part(upsert)
	return c.IndexChange.Extend(ctx, upsert, remove)
}
