package badgerstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// The undo journal: how Apply writes a change too large for one Badger
// transaction and keeps it all or nothing.
//
//	jnl/<catalog>/undo/<id> -> 0x00 (the resource was absent) or 0x01 + its old record
//	jnl/<catalog>/mark      -> JSON journalMark: the undo entries are complete
//
// The steps, each in synced transactions of at most journalChunk entries:
//
//  1. undo: the old record (or "absent") of every resource the change puts;
//  2. mark: the marker, once every undo entry is stored;
//  3. new: the new records;
//  4. commit point: one transaction writes the meta and the events and
//     deletes the marker;
//  5. cleanup: the undo entries are deleted.
//
// A marker means new records may be on disk without their meta and events:
// recoverJournal rolls them back (every undo entry restored, then the
// marker deleted, then the undo entries). Undo entries without a marker are
// either an undo step that never finished (no new record was written) or
// a cleanup that never finished (the change committed): both only need
// deleting. Recovery runs at Open, after a failed journaled Apply, and
// before the next journaled Apply of the catalog; it is idempotent, so a
// crash during recovery is recovered again.
//
// Readers of this process are held back by core.Visibility while a change
// is published, and Apply holds the catalog's applyLock exclusively for a
// journal, so no other Apply of the catalog writes between the undo step
// and the commit point (its write would be rolled back with the journal).
const jnlPrefix = "jnl/"

func jnlMarkKey(c core.CatalogID) []byte    { return []byte(jnlPrefix + string(c) + "/mark") }
func jnlUndoPrefix(c core.CatalogID) []byte { return []byte(jnlPrefix + string(c) + "/undo/") }

// journalMark is the marker's value, for whoever looks at a store by hand.
type journalMark struct {
	Resources int       `json:"resources"`
	Chunked   bool      `json:"chunked,omitempty"` // resources counted as they come (chunked.go)
	Started   time.Time `json:"started"`
}

const (
	undoAbsent  byte = 0
	undoPresent byte = 1
)

// oneTxnMax is the most resources Apply tries in one transaction; a larger
// change goes through the journal without trying, as does one with more
// than txnValueBytes of values or more entries than Badger takes.
var oneTxnMax = 20000 // a variable for tests; under Badger's entry limit (memTableSize)

// journalChunk is the most entries one transaction of the journal holds;
// it holds fewer when they reach txnValueBytes of the value log or when
// Badger says the transaction is full.
var journalChunk = 10000 // a variable for tests

// journalPoint, when set (tests only), is called between the journal's
// transactions with where it stands: "undo 1" (one undo transaction
// stored), "marked", "new 2", "commit" (before the commit point),
// "committed", "cleanup 1", "restore 1", "restored".
var journalPoint func(point string)

func atPoint(format string, a ...any) {
	if journalPoint != nil {
		journalPoint(fmt.Sprintf(format, a...))
	}
}

// applyJournaled writes ch through the undo journal. It rolls back before
// returning an error, unless the change did commit; when the rollback
// fails too, the catalog is marked torn until a later journaled Apply
// rolls it back (Open does too). The caller holds the catalog's applyLock
// exclusively and has entered the store.
func (s *Store) applyJournaled(ctx context.Context, catalog core.CatalogID, ch ports.Changes) error {
	meta, err := encodeMeta(catalog, ch.Meta)
	if err != nil {
		return err
	}
	if err := s.openJournal(ctx, catalog); err != nil {
		return err
	}
	start := time.Now()
	err = s.writeJournal(ctx, catalog, ch, meta)
	return s.closeJournal(ctx, catalog, err, meta, ch.Events, len(ch.Put), start)
}

func encodeMeta(catalog core.CatalogID, m *core.CatalogMeta) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: encode meta %s: %w", catalog, err)
	}
	return b, nil
}

// openJournal recovers what an earlier journal of the catalog left (a
// rollback or a cleanup that failed) before a new one starts: its undo
// entries are not the new change's.
func (s *Store) openJournal(ctx context.Context, catalog core.CatalogID) error {
	if _, err := s.recoverJournal(context.WithoutCancel(ctx), catalog); err != nil {
		return err
	}
	s.torn[catalog] = false
	return nil
}

// closeJournal ends a journaled change whose records were written with
// error werr: without one it commits (step 4) and cleans up (step 5), and
// with one, or when the commit fails, it rolls back. It returns nil only
// when the change committed. When the rollback fails too, the catalog is
// marked torn until a later journaled Apply rolls it back (Open does too).
func (s *Store) closeJournal(ctx context.Context, catalog core.CatalogID, werr error, meta []byte, events []core.Event, puts int, start time.Time) error {
	if err := s.endJournal(ctx, catalog, werr, meta, events); err != nil {
		return err
	}
	s.cleanJournal(ctx, catalog, puts, start)
	return nil
}

// endJournal is closeJournal up to the commit point (step 4), without the
// cleanup: after it returns nil the change is stored whole, and the caller
// must call cleanJournal before the catalog's next journaled change.
func (s *Store) endJournal(ctx context.Context, catalog core.CatalogID, werr error, meta []byte, events []core.Event) error {
	err, committing := werr, false
	if err == nil {
		atPoint("commit")
		if err = ctx.Err(); err == nil {
			committing = true
			err = s.commitJournal(ctx, catalog, meta, events)
		}
	}
	if err != nil {
		// Not cancelled by ctx: the store must not stay half written.
		rolledBack, rerr := s.recoverJournal(context.WithoutCancel(ctx), catalog)
		switch {
		case rerr != nil:
			s.torn[catalog] = true
			s.log.Error("badger journal: rollback failed; the next journaled Apply or Open rolls back",
				zap.String("catalog", string(catalog)), zap.Error(rerr))
			return errors.Join(err, rerr)
		case committing && !rolledBack:
			// The commit reported an error, but its marker is gone: the
			// change is stored whole.
			return nil
		}
		return err
	}
	atPoint("committed")
	return nil
}

// cleanJournal drops a committed change's undo entries (step 5):
// housekeeping that a later recovery redoes if it fails or is cut short.
func (s *Store) cleanJournal(ctx context.Context, catalog core.CatalogID, puts int, start time.Time) {
	if err := s.dropUndo(context.WithoutCancel(ctx), catalog); err != nil {
		s.log.Warn("badger journal: cleanup failed; done at the next journaled Apply or Open",
			zap.String("catalog", string(catalog)), zap.Error(err))
	}
	s.log.Debug("badger journaled apply", zap.String("catalog", string(catalog)),
		zap.Int("resources", puts), zap.Duration("took", time.Since(start)))
}

// writeJournal stores the undo entries, the marker and the new records of
// ch: steps 1 to 3.
func (s *Store) writeJournal(ctx context.Context, catalog core.CatalogID, ch ports.Changes, meta []byte) error {
	undo := jnlUndoPrefix(catalog)
	err := s.inChunks(ctx, "undo", len(ch.Put), func(txn *badger.Txn, i int) (int, error) {
		// Read in the transaction that writes the entry: a repeated id
		// reads the same old record, since no new record is written yet.
		return setUndo(txn, catalog, undo, ch.Put[i].Resource.ID)
	})
	if err != nil {
		return err
	}
	mark, err := json.Marshal(journalMark{Resources: len(ch.Put), Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	if err := s.write(ctx, func(txn *badger.Txn) error { return txn.Set(jnlMarkKey(catalog), mark) }); err != nil {
		return err
	}
	atPoint("marked")
	return s.inChunks(ctx, "new", len(ch.Put), func(txn *badger.Txn, i int) (int, error) {
		return setRecord(txn, catalog, &ch.Put[i])
	})
}

// setUndo writes the undo entry of a resource: its stored record, or
// "absent".
func setUndo(txn *badger.Txn, catalog core.CatalogID, undo []byte, id string) (int, error) {
	v := []byte{undoAbsent}
	item, err := txn.Get(resKey(catalog, id))
	switch {
	case err == nil:
		err = item.Value(func(old []byte) error {
			v = append(append(make([]byte, 0, 1+len(old)), undoPresent), old...)
			return nil
		})
		if err != nil {
			return 0, err
		}
	case !errors.Is(err, badger.ErrKeyNotFound):
		return 0, err
	}
	return valueBytes(len(v)), txn.Set(append(bytes.Clone(undo), id...), v)
}

// setRecord writes a resource's new record.
func setRecord(txn *badger.Txn, catalog core.CatalogID, p *ports.StoredResource) (int, error) {
	v, err := json.Marshal(record{Resource: p.Resource, Hash: p.Hash})
	if err != nil {
		return 0, fmt.Errorf("badgerstore: encode %s: %w", p.Resource.Ref(), err)
	}
	return valueBytes(len(v)), txn.Set(resKey(catalog, p.Resource.ID), v)
}

// commitJournal is the commit point: the meta, the events and the marker's
// deletion in one transaction.
func (s *Store) commitJournal(ctx context.Context, catalog core.CatalogID, meta []byte, events []core.Event) error {
	return s.write(ctx, func(txn *badger.Txn) error {
		if meta != nil {
			if err := txn.Set(metaKey(catalog), meta); err != nil {
				return err
			}
		}
		for _, ev := range events {
			if err := recordEvent(txn, ev); err != nil {
				return err
			}
		}
		return txn.Delete(jnlMarkKey(catalog))
	})
}

// recoverJournals recovers the journal of every catalog that has one; Open
// and Restore call it. rolledBack says whether any change was rolled back.
func (s *Store) recoverJournals(ctx context.Context) (rolledBack bool, err error) {
	var catalogs []core.CatalogID
	err = s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte(jnlPrefix)
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); {
			rest := bytes.TrimPrefix(it.Item().Key(), []byte(jnlPrefix))
			c, _, _ := bytes.Cut(rest, []byte("/"))
			catalogs = append(catalogs, core.CatalogID(c))
			// Past the catalog's keys: '0' follows '/'.
			it.Seek([]byte(jnlPrefix + string(c) + "0"))
		}
		return nil
	})
	for _, c := range catalogs {
		if err != nil {
			break
		}
		var rb bool
		rb, err = s.recoverJournal(ctx, c)
		rolledBack = rolledBack || rb
	}
	return rolledBack, err
}

// recoverJournal rolls back the catalog's unfinished journal, if it has a
// marker, and deletes its undo entries. rolledBack says whether there was
// a marker (a change that had not committed).
func (s *Store) recoverJournal(ctx context.Context, catalog core.CatalogID) (rolledBack bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(jnlMarkKey(catalog))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		rolledBack = err == nil
		return err
	})
	if err != nil {
		return false, err
	}
	if rolledBack {
		if err := s.restoreUndo(ctx, catalog); err != nil {
			return true, err
		}
		atPoint("restored")
		if err := s.write(ctx, func(txn *badger.Txn) error { return txn.Delete(jnlMarkKey(catalog)) }); err != nil {
			return true, err
		}
		s.log.Warn("badger journal: an unfinished change was rolled back", zap.String("catalog", string(catalog)))
	}
	return rolledBack, s.dropUndo(ctx, catalog)
}

// restoreUndo writes back every undo entry of the catalog: the old record,
// or the resource's deletion when it was absent. The entries stay, so a
// crash here restores again.
func (s *Store) restoreUndo(ctx context.Context, catalog core.CatalogID) error {
	prefix := jnlUndoPrefix(catalog)
	var after []byte
	for page := 1; ; page++ {
		keys, vals, err := s.undoPage(prefix, after, true)
		if err != nil || len(keys) == 0 {
			return err
		}
		err = s.inChunks(ctx, "", len(keys), func(txn *badger.Txn, i int) (int, error) {
			key := resKey(catalog, string(bytes.TrimPrefix(keys[i], prefix)))
			if v := vals[i]; len(v) > 0 && v[0] == undoPresent {
				return valueBytes(len(v) - 1), txn.Set(key, v[1:])
			}
			return 0, txn.Delete(key)
		})
		if err != nil {
			return err
		}
		after = keys[len(keys)-1]
		atPoint("restore %d", page)
	}
}

// dropUndo deletes the catalog's undo entries.
func (s *Store) dropUndo(ctx context.Context, catalog core.CatalogID) error {
	prefix := jnlUndoPrefix(catalog)
	var after []byte // not from the start: the iterator would step over every deleted key again
	for page := 1; ; page++ {
		keys, _, err := s.undoPage(prefix, after, false)
		if err != nil || len(keys) == 0 {
			return err
		}
		err = s.inChunks(ctx, "", len(keys), func(txn *badger.Txn, i int) (int, error) {
			return 0, txn.Delete(keys[i])
		})
		if err != nil {
			return err
		}
		after = keys[len(keys)-1]
		atPoint("cleanup %d", page)
	}
}

// undoPage returns copies of up to journalChunk undo entries under prefix
// after the key after (from the first when nil), with their values when
// values is set.
func (s *Store) undoPage(prefix, after []byte, values bool) (keys, vals [][]byte, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = values
		it := txn.NewIterator(opts)
		defer it.Close()
		it.Rewind()
		if after != nil {
			it.Seek(append(bytes.Clone(after), 0))
		}
		for ; it.Valid() && len(keys) < journalChunk; it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
			if values {
				v, err := it.Item().ValueCopy(nil)
				if err != nil {
					return err
				}
				vals = append(vals, v)
			}
		}
		return nil
	})
	return keys, vals, err
}

// inChunks calls put for i in [0, n) in successive synced transactions of
// at most journalChunk entries, each ending early when its value-log bytes
// reach txnValueBytes or Badger finds it full. put writes one entry and
// returns the value bytes it adds (valueBytes).
// Between transactions it checks ctx and, when step is named, reports
// "<step> <transactions so far>" to journalPoint.
func (s *Store) inChunks(ctx context.Context, step string, n int, put func(txn *badger.Txn, i int) (int, error)) error {
	for k, i := 1, 0; i < n; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		next, written := i, 0
		err := s.write(ctx, func(txn *badger.Txn) error {
			next, written = i, 0
			for next < n && next-i < journalChunk && written < txnValueBytes {
				b, err := put(txn, next)
				if errors.Is(err, badger.ErrTxnTooBig) && next > i {
					return nil // full: the rest goes in the next transaction
				}
				if err != nil {
					return err
				}
				next, written = next+1, written+b
			}
			return nil
		})
		if err != nil {
			return err
		}
		s.wrote(written)
		i = next
		if step != "" {
			atPoint("%s %d", step, k)
		}
	}
	return nil
}

// write runs one update transaction (retried on conflict) holding the write
// gate shared for that transaction only, so settle may run between the
// journal's transactions instead of holding back every other writer until
// a large change is done.
func (s *Store) write(ctx context.Context, fn func(txn *badger.Txn) error) error {
	s.writes.RLock()
	defer s.writes.RUnlock()
	return s.updateRetry(ctx, fn)
}
