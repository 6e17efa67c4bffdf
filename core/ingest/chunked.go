package ingest

import (
	"context"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// applyChunked applies a file larger than one chunk through a store that
// writes a change chunk by chunk (ports.ChunkedApplier): each chunk is
// diffed, written and indexed before the next is mapped, so the apply
// holds one chunk of resources instead of the file's (a million-row file's
// records, held for one Apply, were most of its peak). d has diffed the
// first chunks (their change is larger than one index chunk); rest holds
// the others.
//
// It all runs inside one publication, so readers see the change whole or
// not at all, as with Apply; they wait for the mapping and diff of the
// chunks in rest as well as for the write and index of all. A change that
// fails part way is rolled back in the store, and the index is put back
// from the store for the chunks it had taken (restoreIndex).
func (s *Service) applyChunked(ctx context.Context, rel core.Release, d *diff, rest *pulled,
	w ports.ChunkedApplier, meta core.CatalogMeta, before core.CatalogCounts, started time.Time, written func()) (core.IngestResult, error) {
	cat := rel.Catalog
	var res core.IngestResult
	var events []core.Event
	var indexed []core.Key // new and changed resources the index has taken
	err := s.vis.Publish(func() error {
		tx, err := w.BeginApply(ctx, cat)
		if err != nil {
			return core.Unavailablef(err, "writing %s failed; nothing was changed", cat)
		}
		// write stores and indexes what the diff has so far, the index a
		// chunk at a time (the first write holds up to two chunks: what
		// was diffed before the publication).
		write := func() error {
			puts, changed := d.take()
			if len(puts) == 0 {
				return nil
			}
			if err := tx.Put(ctx, puts); err != nil {
				return core.Unavailablef(err, "writing %s failed; nothing was changed", cat)
			}
			for len(changed) > 0 {
				part := changed[:min(len(changed), s.cfg.IndexChunk)]
				changed = changed[len(part):]
				indexed = append(indexed, keysAt(puts, part)...)
				change, err := s.index.Prepare(ctx, resourcesAt(puts, part), nil)
				if err == nil {
					err = change.Commit()
				}
				if err != nil {
					return core.Unavailablef(err, "indexing %s failed; nothing was changed", cat)
				}
			}
			return nil
		}
		err = write()
		for err == nil {
			chunk, ok := rest.next()
			if !ok {
				err = rest.err
				break
			}
			if err = d.add(ctx, chunk); err == nil {
				err = write()
			}
		}
		if err == nil {
			res = d.result(started, s.now())
			rel.Version = res.Version
			meta.Counts = d.counted(before)
			events = s.record(&meta, rel, &res, d.changes)
			if err = tx.Commit(ctx, &meta, events); err != nil {
				err = core.Unavailablef(err, "writing %s failed; nothing was changed", cat)
			}
		}
		if err != nil {
			if aerr := tx.Abort(context.WithoutCancel(ctx)); aerr != nil {
				s.log.ErrorContext(ctx, "rolling back a chunked write failed; the store rolls it back at the next write or start", "catalog", cat, "error", aerr)
			}
			s.restoreIndex(context.WithoutCancel(ctx), cat, indexed)
			return err
		}
		s.wrote(cat, meta.Counter, res.Upserted)
		return nil
	})
	if err != nil {
		return core.IngestResult{}, err
	}
	written()
	s.queueVectors(cat, indexed, nil) // in the background: a file of several chunks
	return s.applied(ctx, res, events), nil
}

// restoreIndex indexes keys again as the store holds them, after a change
// that the index had taken in part was rolled back in the store. If that
// fails too, the index is rebuilt at the next start.
func (s *Service) restoreIndex(ctx context.Context, cat core.CatalogID, keys []core.Key) {
	for len(keys) > 0 {
		part := keys[:min(len(keys), s.cfg.IndexChunk)]
		keys = keys[len(part):]
		stored, err := s.store.GetMany(ctx, part)
		var upsert []core.Resource
		live := make(map[string]bool, len(stored))
		for _, sr := range stored {
			if !sr.Resource.Withdrawn {
				upsert = append(upsert, sr.Resource)
				live[sr.Resource.ID] = true
			}
		}
		var remove []core.Key
		for _, k := range part {
			if !live[k.ID] {
				remove = append(remove, k)
			}
		}
		var change ports.IndexChange
		if err == nil {
			change, err = s.index.Prepare(ctx, upsert, remove)
		}
		if err == nil {
			err = change.Commit()
		}
		if err != nil {
			s.whole.Store(false) // not kept at stop: the next start rebuilds it
			s.log.ErrorContext(ctx, "putting the index back after a failed write failed; the next start rebuilds the index", "catalog", cat, "error", err)
			return
		}
	}
}
