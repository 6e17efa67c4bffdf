package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Several replicas over one shared store (docs/SCALING.md). The store is the
// truth; each replica keeps its own text and vector indexes. A write is
// made under a lock every replica honours (so the diff it reads is not
// stale), advances the catalog's change counter, and the store announces
// it (Config.Feed). Every replica then indexes the resources written after
// the counter it has indexed: its own writes are already indexed when they
// are made, the others' arrive through follow.
//
// A store of one process (Config.Feed nil) needs none of this: applyMu
// orders the writes of a catalog, and the index follows each of them.

// following is how far the index holds one catalog of a shared store:
// seen is the change counter it holds once tracked. One per catalog, made
// in New (the map is never written after), its fields under the catalog's
// applyMu.
type following struct {
	seen    uint64
	tracked bool
}

// lockPoll is how often a replica waiting for another's write lock tries again.
const lockPoll = 20 * time.Millisecond

// writeLock takes the catalog's write lock across replicas and brings the
// index up to the store's counter, so the write that follows diffs against
// the latest data and is indexed in counter order. Called with
// applyMu[cat] held; without a shared store it does nothing.
func (s *Service) writeLock(ctx context.Context, cat core.CatalogID) (unlock func(), err error) {
	if s.cfg.Feed == nil || s.cfg.Locks == nil {
		return func() {}, nil
	}
	for {
		held, ok, err := s.cfg.Locks.TryLock(ctx, "write:"+string(cat))
		if err != nil {
			return nil, core.Unavailablef(err, "store unavailable")
		}
		if ok {
			// Its loss is not watched (held.Lost): the store refuses a
			// write diffed at a counter that moved (ports.Changes.IfCounter).
			if err := s.catchUpLocked(ctx, cat); err != nil {
				held.Unlock()
				return nil, core.Unavailablef(err, "catching up with the other replicas' writes of %s failed; nothing was changed", cat)
			}
			return held.Unlock, nil
		}
		if !sleep(ctx, lockPoll) {
			return nil, ctx.Err()
		}
	}
}

// ifCounter is the change counter the write about to be made was diffed
// at, for the store to check (ports.Changes.IfCounter); nil without a
// shared store.
func (s *Service) ifCounter(meta core.CatalogMeta) *uint64 {
	if s.cfg.Feed == nil {
		return nil
	}
	c := meta.Counter
	return &c
}

// wrote records that this replica's own write of cat, made at counter
// base, is indexed (it advanced the counter only if it put resources).
func (s *Service) wrote(cat core.CatalogID, base uint64, puts int) {
	if s.cfg.Feed != nil && puts > 0 {
		s.follows[cat].seen = base + 1
	}
}

// track records the counter the index of cat holds once it is loaded
// (rebuilt or resumed): what the store announces later is newer. Called
// with applyMu[cat] held, the counter read before the scan (a resource
// written during the scan is indexed twice, which changes nothing).
func (s *Service) track(ctx context.Context, cat core.CatalogID) error {
	if s.cfg.Feed == nil {
		return nil
	}
	meta, err := s.store.Meta(ctx, cat)
	if err != nil {
		return err
	}
	s.follows[cat].seen = meta.Counter
	s.follows[cat].tracked = true
	return nil
}

// follow indexes the writes of other replicas as the store announces them,
// until ctx ends. Started with the schedule (Start).
func (s *Service) follow(ctx context.Context) {
	err := s.cfg.Feed.Watch(ctx, func(cat core.CatalogID, counter uint64) {
		mu, ok := s.applyMu[cat]
		if !ok {
			return // a catalog this build does not know
		}
		mu.Lock()
		defer mu.Unlock()
		if !s.follows[cat].tracked || counter <= s.follows[cat].seen {
			return
		}
		if err := s.catchUpLocked(ctx, cat); err != nil && ctx.Err() == nil {
			// The next announcement (or reconnection) tries again.
			s.log.Error("indexing another replica's write failed", "catalog", cat, "counter", counter, "error", err)
		}
	})
	if err != nil && ctx.Err() == nil {
		s.log.Error("following the other replicas' writes stopped", "error", err)
	}
}

// catchUpLocked indexes every resource of cat written after the counter
// the index holds, published at once like a write of this replica (chunked
// like one), then their vectors. Called with applyMu[cat] held.
func (s *Service) catchUpLocked(ctx context.Context, cat core.CatalogID) error {
	if !s.follows[cat].tracked {
		return nil // the rebuild reads it all
	}
	var puts []ports.StoredResource
	var changed []int
	var remove []core.Key
	upTo, err := s.cfg.Feed.Since(ctx, cat, s.follows[cat].seen, func(sr ports.StoredResource) error {
		if sr.Resource.Withdrawn {
			remove = append(remove, sr.Resource.Key())
			return nil
		}
		changed = append(changed, len(puts))
		puts = append(puts, sr)
		return nil
	})
	if err != nil {
		return err
	}
	if upTo <= s.follows[cat].seen {
		return nil
	}
	chunks := indexChunks(changed, remove, s.indexChunk(len(changed)+len(remove)))
	if len(chunks) > 1 {
		s.bulk.enter()
		defer s.bulk.leave()
	}
	change, err := s.index.Prepare(ctx, resourcesAt(puts, chunks[0].upsert), chunks[0].remove)
	if err == nil {
		defer change.Discard() // a no-op once committed
		err = change.Build()   // beside searches, as in Apply
	}
	if err != nil {
		return fmt.Errorf("indexing changes %d..%d: %w", s.follows[cat].seen+1, upTo, err)
	}
	drop := dropsPuts(chunks, changed)
	var vectorKeys []core.Key
	err = s.vis.Publish(func() error {
		parts := laterParts(puts, chunks)
		if drop {
			vectorKeys, puts = keysAt(puts, changed), nil
		}
		return s.commitChunks(ctx, change, parts, chunks)
	})
	if err != nil {
		return fmt.Errorf("indexing changes %d..%d: %w", s.follows[cat].seen+1, upTo, err)
	}
	s.log.InfoContext(ctx, "indexed another replica's writes", "catalog", cat, "from", s.follows[cat].seen+1, "to", upTo,
		"upserted", len(changed), "withdrawn", len(remove))
	s.follows[cat].seen = upTo
	if !drop {
		vectorKeys = keysAt(puts, changed)
	}
	s.followVectors(cat, vectorKeys, remove)
	return nil
}
