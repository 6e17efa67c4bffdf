package badgerstore

import (
	"context"
	"errors"
	"testing"

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
	smallJournal(t)
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	must(t, s.Apply(ctx, core.National, jgen(1)))
	checkGen(t, s, 1)

	// Aborted after some chunks.
	tx, err := s.BeginApply(ctx, core.National)
	must(t, err)
	must(t, tx.Put(ctx, jgen(2).Put[:150]))
	if got, _, _ := s.Get(ctx, core.Key{Catalog: core.National, ID: "00001"}); got.Resource.Version != "2" {
		t.Fatalf("a record put is readable before Commit (readers are held back by the caller): %+v", got.Resource)
	}
	must(t, tx.Abort(ctx))
	checkGen(t, s, 1)
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
