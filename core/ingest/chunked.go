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
// Everything runs beside readers: the store reads as it was until the
// change commits (ports.ChunkedApply), and the new and changed resources
// are indexed a part of one index chunk at a time as they are written,
// each part extending one index change that searches do not see
// (ports.IndexChange.Extend). The publication then holds readers back
// only for the store's commit and the index's swap, and readers see the
// change whole or not at all, as with Apply. A change that fails part way
// is rolled back in the store and discarded in the index.
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
	// change is the index's part, built beside readers: nil until the
	// first part; undone unless committed.
	var change ports.IndexChange
	defer func() {
		if change != nil {
			change.Discard()
		}
	}()
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
	// index has the index take what is held in parts of one index chunk,
	// and, once the file is read (all), the rest.
	index := func(all bool) error {
		for len(held) >= s.cfg.IndexChunk || (all && len(held) > 0) {
			part := held[:min(len(held), s.cfg.IndexChunk)]
			for i := range part {
				indexed = append(indexed, part[i].Key())
			}
			var err error
			if change == nil {
				if change, err = s.index.Prepare(ctx, part, nil); err == nil {
					err = change.Build()
				}
			} else {
				err = change.Extend(ctx, part, nil)
			}
			if err != nil {
				return core.Unavailablef(err, "indexing %s failed; nothing was changed", cat)
			}
			clear(part) // let the index's own copies be all that is left
			held = held[len(part):]
		}
		if all {
			held = nil
		}
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
	for err == nil && more {
		if err = index(false); err == nil {
			more, err = next()
		}
	}
	if err == nil {
		err = index(true)
	}
	if err != nil {
		abort()
		return core.IngestResult{}, err // the deferred Discard undoes the index's part
	}
	res := d.result(started, s.now())
	rel.Version = res.Version
	meta.Counts = d.counted(before)
	events := s.record(&meta, rel, &res, d.changes)
	err = s.vis.Publish(func() error {
		if err := tx.Commit(ctx, &meta, events); err != nil {
			return core.Unavailablef(err, "writing %s failed; nothing was changed", cat)
		}
		s.wrote(cat, meta.Counter, res.Upserted)
		// Stored: the index follows whatever happens now.
		if change != nil {
			if err := change.Commit(); err != nil {
				s.whole.Store(false) // not kept at stop: the next start rebuilds it
				s.log.ErrorContext(ctx, "index commit failed; the next start rebuilds the index", "catalog", cat, "error", err)
			}
		}
		return nil
	})
	if err != nil {
		abort()
		return core.IngestResult{}, err
	}
	written()
	s.queueVectors(cat, indexed, nil) // in the background: a file of several chunks
	return s.applied(ctx, res, events), nil
}
