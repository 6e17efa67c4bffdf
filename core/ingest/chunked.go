package ingest

import (
	"context"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// applyChunked applies a file larger than one chunk through a store that
// writes a change chunk by chunk (ports.ChunkedApplier): each chunk is
// diffed and written before the next is mapped, so the apply holds one
// chunk of resources instead of the file's (a million-row file's records,
// held for one Apply, were most of its peak). d has diffed the first
// chunk; second is the next, rest the others.
//
// The records are written beside readers, for whom the store reads as it
// was until the change commits (ports.ChunkedApply), for as long as the
// new and changed resources, which the index takes inside the
// publication, number one index chunk at most: a file sent again with a
// new version and a few changed rows holds readers back only for its
// commit and that chunk. Once they number more, the rest of the file is
// read, diffed, written and indexed a chunk at a time inside the
// publication, as the index cannot take a change unseen by searches for
// longer than one Prepare. Either way readers see the change whole or
// not at all, as with Apply. A change that fails part way is rolled back
// in the store, and the index is put back from the store for the chunks
// it had taken (restoreIndex).
func (s *Service) applyChunked(ctx context.Context, rel core.Release, d *diff, second []core.Resource, rest *pulled,
	w ports.ChunkedApplier, meta core.CatalogMeta, before core.CatalogCounts, started time.Time, written func()) (core.IngestResult, error) {
	cat := rel.Catalog
	tx, err := w.BeginApply(ctx, cat)
	if err != nil {
		return core.IngestResult{}, core.Unavailablef(err, "writing %s failed; nothing was changed", cat)
	}
	var held []core.Resource // new and changed resources the index has yet to take
	var indexed []core.Key   // those it took (all of them once committed)
	abort := func() {
		if aerr := tx.Abort(context.WithoutCancel(ctx)); aerr != nil {
			s.log.ErrorContext(ctx, "rolling back a chunked write failed; the store rolls it back at the next write or start", "catalog", cat, "error", aerr)
		}
	}
	// write stores what the diff has so far and holds its new and changed
	// resources for the index.
	write := func() error {
		puts, at := d.take()
		if len(puts) == 0 {
			return nil
		}
		if err := tx.Put(ctx, puts); err != nil {
			return core.Unavailablef(err, "writing %s failed; nothing was changed", cat)
		}
		held = append(held, resourcesAt(puts, at)...)
		return nil
	}
	// index has the index take what is held, a chunk at a time, inside
	// the publication.
	index := func() error {
		for len(held) > 0 {
			part := held[:min(len(held), s.cfg.IndexChunk)]
			for i := range part {
				indexed = append(indexed, part[i].Key())
			}
			change, err := s.index.Prepare(ctx, part, nil)
			if err == nil {
				err = change.Commit()
			}
			if err != nil {
				return core.Unavailablef(err, "indexing %s failed; nothing was changed", cat)
			}
			clear(part) // let the index's own copies be all that is left
			held = held[len(part):]
		}
		held = nil
		return nil
	}
	// next diffs and writes the next chunk; more is false once the file
	// is read.
	next := func() (more bool, err error) {
		chunk, ok := second, second != nil
		if second = nil; !ok {
			chunk, ok = rest.next()
		}
		if !ok {
			return false, rest.err
		}
		if err := d.add(ctx, chunk); err != nil {
			return false, err
		}
		return true, write()
	}

	more := true
	err = write()
	for err == nil && more && len(held) <= s.cfg.IndexChunk {
		more, err = next() // beside readers
	}
	if err != nil {
		abort() // the index has taken nothing yet
		return core.IngestResult{}, err
	}
	var res core.IngestResult
	var events []core.Event
	err = s.vis.Publish(func() error {
		err := index()
		for err == nil && more {
			if more, err = next(); err == nil {
				err = index()
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
			abort()
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
