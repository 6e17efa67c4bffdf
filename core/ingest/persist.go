package ingest

import (
	"context"
	"fmt"

	"github.com/climatesearch/climatesearch/core"
)

// The text index is derived from the store and rebuilt at start, which at a
// million resources takes minutes. So a clean stop keeps it (Persist) under
// a mark the store keeps too, and the next start takes it up again when the
// store still holds that mark (resume): the store forgets the mark whenever
// it is opened, so any write since, by this process or another, or a crash,
// leads to a rebuild instead.

// resume takes up the index kept from the last clean stop and reports
// whether it did; otherwise the index is empty for the rebuild.
func (s *Service) resume(ctx context.Context) (bool, error) {
	mark, err := s.store.IndexMark(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "reading the index mark failed; rebuilding the index", "error", err)
		mark = ""
	}
	ok, err := s.index.Resume(ctx, mark)
	if err != nil || !ok {
		return false, err
	}
	for _, c := range core.Catalogs {
		s.vis.MarkLoaded(c)
	}
	s.whole.Store(true)
	// (Never with a shared store, whose mark is always empty: it would
	// need each catalog's counter kept with the index.)
	s.log.InfoContext(ctx, "search index taken up from the last clean stop")
	return true, nil
}

// Persist keeps the index for the next start. It is called once at stop,
// after the boot and every ingest have ended, and holds every catalog's
// write lock so none can begin. An index that never got whole (a stop
// during the boot, a catalog that failed to load) is not kept.
func (s *Service) Persist(ctx context.Context) error {
	for _, c := range core.Catalogs {
		mu := s.applyMu[c]
		mu.Lock()
		defer mu.Unlock()
	}
	if !s.whole.Load() || s.cfg.Feed != nil {
		// A shared store cannot keep a replica's mark (the other replicas
		// write on): such a replica rebuilds its index at start.
		return nil
	}
	mark, err := s.index.Persist(ctx)
	if err != nil {
		return fmt.Errorf("keeping the search index: %w", err)
	}
	if mark == "" {
		return nil // an index in memory
	}
	if err := s.store.SetIndexMark(ctx, mark); err != nil {
		return fmt.Errorf("keeping the search index's mark: %w", err)
	}
	return nil
}
