package badgerstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// A catalog re-ingested over and over keeps its size on disk: the value
// log, which Badger maps into memory, holds about the live values, not
// every version ever written. Before settle it grew by every rewrite
// (585 MB in a 30-minute soak of a 2 MB catalog).
func TestRewritesDoNotGrowTheValueLog(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	defer s.Close()
	ctx := context.Background()

	// Two catalogs of 40 resources of about 12 KB each (1 MB live), each
	// rewritten 160 times by its own writer: 160 MB of values written.
	const n, rounds = 40, 160
	pad := strings.Repeat("lättbetong ", 1100)
	release := func(c core.CatalogID, round int) ports.Changes {
		var ch ports.Changes
		for i := range n {
			r := core.Resource{ID: fmt.Sprintf("r%03d", i), Catalog: c, Name: fmt.Sprintf("Betong %d", round),
				Description: pad, Unit: "kg", A1A3: core.F(float64(round))}
			ch.Put = append(ch.Put, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		}
		return ch
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, c := range core.Catalogs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 1; round <= rounds; round++ {
				if err := s.Apply(ctx, c, release(c, round)); err != nil {
					errs <- fmt.Errorf("%s round %d: %w", c, round, err) // a write must wait for a settle, never fail
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The last settle may still be running. Between settles the log holds
	// the live values, the file being written and what was written since
	// the last settle: the bound is four value-log files, against 160 MB
	// without settling.
	const bound = 4 * (16 << 20)
	deadline := time.Now().Add(time.Minute)
	for s.vlogBytes() > bound && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := s.vlogBytes(); got > bound {
		t.Fatalf("value log holds %d MB after writing %d MB of rewrites of 1 MB of resources; want at most %d MB",
			got>>20, 2*n*rounds*len(pad)>>20, bound>>20)
	}

	// Every resource is its last version, also after a reopen.
	check := func(s *Store) {
		t.Helper()
		for _, c := range core.Catalogs {
			var count int
			err := s.Scan(ctx, c, func(r ports.StoredResource) error {
				count++
				if r.Resource.Name != fmt.Sprintf("Betong %d", rounds) || r.Resource.Description != pad {
					return fmt.Errorf("%s: name %q, description of %d bytes", r.Resource.Ref(), r.Resource.Name, len(r.Resource.Description))
				}
				return nil
			})
			if err != nil || count != n {
				t.Fatalf("%s: %d resources, %v", c, count, err)
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir)
	defer s.Close()
	check(s)
}
