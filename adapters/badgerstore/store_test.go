package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/storetest"
)

func openT(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// full returns a resource with every field set (storetest.Full).
func full(c core.CatalogID, id string) ports.StoredResource { return storetest.Full(c, id) }

// TestApplyLimit checks that a catalog far larger than ours fits in one
// Apply, and that an oversized Apply fails cleanly and writes nothing.
func TestApplyLimit(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()

	// Copies of one full resource (about 1 KB of JSON, so its record goes
	// to the value log) under different ids; hashes do not matter here.
	base := full(core.National, "")
	puts := func(n int) []ports.StoredResource {
		out := make([]ports.StoredResource, n)
		for i := range out {
			out[i] = base
			out[i].Resource.ID = fmt.Sprintf("r%06d", i)
		}
		return out
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: puts(core.MaxBatchResources)}); err != nil {
		t.Fatalf("Apply of %d resources: %v", core.MaxBatchResources, err)
	}
	// Small records, so the entry count, not the byte budget, is what breaks.
	huge := make([]ports.StoredResource, s.db.MaxBatchCount()+1)
	for i := range huge {
		huge[i].Resource = core.Resource{ID: fmt.Sprintf("huge%06d", i), Catalog: core.National}
	}
	err := s.Apply(ctx, core.National, ports.Changes{Put: huge, Meta: &core.CatalogMeta{Catalog: core.National, Version: "huge"}})
	if !errors.Is(err, badger.ErrTxnTooBig) || core.KindOf(err) != core.KindInvalid {
		t.Fatalf("oversized Apply = %v; want an invalid error wrapping ErrTxnTooBig", err)
	}
	t.Log(err)
	if n, _ := s.Count(ctx, core.National); n != core.MaxBatchResources {
		t.Fatalf("Count after oversized Apply = %d", n)
	}
	if m, _ := s.Meta(ctx, core.National); m.Version != "" {
		t.Fatalf("meta after oversized Apply = %+v", m)
	}
}

func TestPingAfterClose(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping after Close = %v", err)
	}
	// Every method fails the same way instead of reaching Badger, whose
	// iterators panic on a closed DB.
	if err := s.Scan(ctx, core.National, func(ports.StoredResource) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Scan after Close = %v", err)
	}
	if _, err := s.Count(ctx, core.National); !errors.Is(err, ErrClosed) {
		t.Fatalf("Count after Close = %v", err)
	}
	if err := s.Apply(ctx, core.National, ports.Changes{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Apply after Close = %v", err)
	}
}

// TestCloseWhileBusy closes the store under concurrent readers and writers:
// nothing may panic, and every call either works or reports ErrClosed.
func TestCloseWhileBusy(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	if err := s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{full(core.National, "a")}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for i := range 4 {
		go func() {
			for {
				var err error
				if i%2 == 0 {
					_, err = s.Count(ctx, core.National)
				} else {
					err = s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{full(core.National, "a")}})
				}
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						done <- err
						return
					}
					done <- nil
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
