package ingest_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/core"
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
