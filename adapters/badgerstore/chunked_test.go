package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// applyInChunks writes ch through BeginApply, 70 resources per Put.
func (s *Store) applyInChunks(ctx context.Context, catalog core.CatalogID, ch ports.Changes) error {
	tx, err := s.BeginApply(ctx, catalog)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Abort(ctx) }()
	for put := ch.Put; len(put) > 0; put = put[min(len(put), 70):] {
		if err := tx.Put(ctx, put[:min(len(put), 70)]); err != nil {
			return err
		}
	}
	return tx.Commit(ctx, ch.Meta, ch.Events)
}

// TestChunkedApplyIsWholeOrNothing: a change put in chunks is stored whole
// with its meta and event at Commit, and not at all after Abort, a failed
// Put or a cancelled Commit (readable at once, the decoded cache
// included); Abort after Commit changes nothing, and a later Apply works.
func TestChunkedApplyIsWholeOrNothing(t *testing.T) {
	ctx := context.Background()
	s := journalStore(t)
	checkGen(t, s, 1)

	// Aborted after some chunks.
	tx, err := s.BeginApply(ctx, core.National)
	must(t, err)
	defer func(tx ports.ChunkedApply) { _ = tx.Abort(ctx) }(tx) // a failing check would leave Close waiting
	must(t, tx.Put(ctx, jgen(2).Put[:250]))
	// Until the change ends, the catalog reads as it was; another
	// catalog's write meanwhile is read as it is, also beside it.
	seesGen(t, s, 1)
	d := core.Resource{ID: "D1", Catalog: core.DKBR, NameDA: "dansk", Version: "1"}
	must(t, s.Apply(ctx, core.DKBR, ports.Changes{Put: []ports.StoredResource{{Resource: d, Hash: core.ContentHash(&d)}}}))
	both, err := s.GetMany(ctx, []core.Key{{Catalog: core.National, ID: "00001"}, d.Key()})
	if err != nil || len(both) != 2 || both[0].Resource.Version != "1" || both[1].Resource.NameDA != "dansk" {
		t.Fatalf("national beside dkbr during a change of national: %+v, %v", both, err)
	}
	must(t, tx.Abort(ctx))
	checkGen(t, s, 1)
	seesGen(t, s, 1)
	if err := tx.Put(ctx, jgen(2).Put[150:]); err == nil {
		t.Fatal("Put after Abort")
	}

	// A Put refused (a resource of another catalog), then Abort.
	tx, err = s.BeginApply(ctx, core.National)
	must(t, err)
	must(t, tx.Put(ctx, jgen(2).Put[:100]))
	bad := jgen(2).Put[100:101]
	bad[0].Resource.Catalog = core.DKBR
	if err := tx.Put(ctx, bad); core.KindOf(err) != core.KindInvalid {
		t.Fatalf("a resource of another catalog: %v", err)
	}
	must(t, tx.Abort(ctx))
	checkGen(t, s, 1)

	// A Commit whose context is cancelled rolls back.
	tx, err = s.BeginApply(ctx, core.National)
	must(t, err)
	must(t, tx.Put(ctx, jgen(2).Put))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := tx.Commit(cancelled, jgen(2).Meta, jgen(2).Events); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit with a cancelled context: %v", err)
	}
	must(t, tx.Abort(ctx))
	checkGen(t, s, 1)

	// Committed whole; Abort then does nothing.
	must(t, s.applyInChunks(ctx, core.National, jgen(2)))
	checkGen(t, s, 2)
	seesGen(t, s, 2)
	must(t, s.Apply(ctx, core.National, jgen(3)))
	checkGen(t, s, 3)
}

// TestChunkedApplyCrash kills a process at points of a chunked change: the
// store reopens holding exactly the old generation (the new one once the
// commit point is passed), and the next Apply works.
func TestChunkedApplyCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	smallJournal(t)
	t.Setenv(journalChunkEnv, "1")
	crashCases(t, []crashCase{
		{point: "marked", want: 1},
		{point: "chunk 1", want: 1},
		{point: "chunk 2", want: 1},
		{point: "commit", want: 1},
		{point: "committed", want: 2},
		{point: "cleanup 2", want: 2},
		{point: "chunk 2", want: 1, reopen: "restore 1"},
	})
}

// seesGen fails unless every read of national (Count, Get, GetMany,
// FindByID, Scan, ScanStates) shows generation g's resources.
func seesGen(t *testing.T, s *Store, g int) {
	t.Helper()
	ctx := context.Background()
	want := jgen(g).Put
	v := strconv.Itoa(g)
	if n, err := s.Count(ctx, core.National); err != nil || n != len(want) {
		t.Fatalf("Count %d, %v; want the %d of generation %d", n, err, len(want), g)
	}
	if r, found, err := s.Get(ctx, core.Key{Catalog: core.National, ID: "00001"}); err != nil || !found || r.Resource.Version != v {
		t.Fatalf("Get: %+v, %v, %v; want generation %d", r.Resource, found, err, g)
	}
	// The first id, and the first id beyond generation g.
	many, err := s.GetMany(ctx, []core.Key{{Catalog: core.National, ID: "00000"}, {Catalog: core.National, ID: fmt.Sprintf("%05d", len(want))}})
	if err != nil || len(many) != 1 || many[0].Resource.Version != v {
		t.Fatalf("GetMany: %+v, %v; want one resource of generation %d", many, err, g)
	}
	if rs, err := s.FindByID(ctx, "00002"); err != nil || len(rs) != 1 || rs[0].Resource.Version != v {
		t.Fatalf("FindByID: %+v, %v; want generation %d", rs, err, g)
	}
	n := 0
	err = s.Scan(ctx, core.National, func(r ports.StoredResource) error {
		if r.Resource.Version != v {
			return fmt.Errorf("Scan: %s of version %s, want %s", r.Resource.ID, r.Resource.Version, v)
		}
		n++
		return nil
	})
	if err != nil || n != len(want) {
		t.Fatalf("Scan: %d resources, %v; want %d", n, err, len(want))
	}
	n = 0
	err = s.ScanStates(ctx, core.National, func(st ports.ResourceState) error {
		if st.Hash != want[n].Hash {
			return fmt.Errorf("ScanStates: %s hash %s, want generation %d's", st.ID, st.Hash, g)
		}
		n++
		return nil
	})
	if err != nil || n != len(want) {
		t.Fatalf("ScanStates: %d states, %v; want %d", n, err, len(want))
	}
}

// TestReadsDuringAChunkedChange: readers that run while chunked changes
// are put, committed and rolled back each see one generation whole: Count
// and a Scan of national give the resources of the generation before or
// after a change, never a mixture, and a Get agrees with a generation
// that existed. (Run with -race: readers share the read view's
// transaction.)
func TestReadsDuringAChunkedChange(t *testing.T) {
	ctx := context.Background()
	s := journalStore(t)
	sizes := map[int]string{len(jgen(1).Put): "1", len(jgen(2).Put): "2", len(jgen(3).Put): "3"}

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 3 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := s.Count(ctx, core.National)
				if err != nil || sizes[n] == "" {
					t.Errorf("Count %d, %v: no generation has that many", n, err)
					return
				}
				versions := map[string]int{}
				err = s.Scan(ctx, core.National, func(r ports.StoredResource) error {
					versions[r.Resource.Version]++
					return nil
				})
				if err != nil || len(versions) != 1 {
					t.Errorf("a Scan read versions %v (%v), want one", versions, err)
					return
				}
				for v, n := range versions {
					if sizes[n] != v {
						t.Errorf("a Scan read %d resources of version %s", n, v)
						return
					}
				}
				if r, found, err := s.Get(ctx, core.Key{Catalog: core.National, ID: "00150"}); err != nil || !found {
					t.Errorf("Get: %v, %v", found, err)
					return
				} else if v := r.Resource.Version; v != "1" && v != "2" && v != "3" {
					t.Errorf("Get: version %q, of no generation", v)
					return
				}
				reads.Add(1)
			}
		})
	}
	for g := 2; g <= 3; g++ {
		// Rolled back, then committed, each put in several chunks.
		tx, err := s.BeginApply(ctx, core.National)
		must(t, err)
		for put := jgen(g).Put; len(put) > 0; put = put[min(len(put), 70):] {
			must(t, tx.Put(ctx, put[:min(len(put), 70)]))
		}
		must(t, tx.Abort(ctx))
		must(t, s.applyInChunks(ctx, core.National, jgen(g)))
	}
	close(stop)
	readers.Wait()
	checkGen(t, s, 3)
	if reads.Load() == 0 {
		t.Fatal("no read ran beside the changes")
	}
}

// TestChunkedCleanupBeforeTheNextChange: a chunked change's Commit returns
// at its commit point, before its undo entries are dropped (the caller's
// readers wait for the commit only), and the catalog's next change waits
// for that cleanup: the cleanup never drops the next change's own undo
// entries, so rolling that change back restores the committed one whole.
func TestChunkedCleanupBeforeTheNextChange(t *testing.T) {
	ctx := context.Background()
	s := journalStore(t)
	cleaning, release := make(chan struct{}), make(chan struct{})
	var let sync.Once // a failing test lets the cleanup go before Close waits for it
	t.Cleanup(func() { let.Do(func() { close(release) }) })
	var held atomic.Bool
	journalPoint = func(p string) { // holds the first cleanup only
		if strings.HasPrefix(p, "cleanup") && held.CompareAndSwap(false, true) {
			close(cleaning)
			<-release
		}
	}
	must(t, s.applyInChunks(ctx, core.National, jgen(2))) // returns with the cleanup held
	<-cleaning
	seesGen(t, s, 2)

	began := make(chan ports.ChunkedApply, 1)
	go func() {
		tx, err := s.BeginApply(ctx, core.National)
		if err != nil {
			t.Error(err)
		}
		began <- tx
	}()
	select {
	case tx := <-began:
		let.Do(func() { close(release) })
		if tx != nil {
			_ = tx.Abort(ctx)
		}
		t.Fatal("the next change began while the last one's undo entries were being dropped")
	case <-time.After(300 * time.Millisecond): // it waits for the cleanup
	}
	let.Do(func() { close(release) })
	tx := <-began
	if tx == nil {
		t.FailNow()
	}
	g3 := jgen(3)
	for put := g3.Put; len(put) > 0; put = put[min(len(put), 70):] {
		must(t, tx.Put(ctx, put[:min(len(put), 70)]))
	}
	must(t, tx.Abort(ctx))
	checkGen(t, s, 2)
}
