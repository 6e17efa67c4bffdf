// Package embedding keeps the vector index in step with the store: vectors
// are computed for new and changed resources only, stored with the
// embedder's identity, loaded at boot, and recomputed when the configured
// embedder changes. Vectors of two models are never mixed.
package embedding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// batchSize bounds one embedding call; servers limit their batch sizes.
const batchSize = 64

// Syncer computes, stores and indexes vectors. A nil *Syncer (no embedder
// configured) does nothing.
type Syncer struct {
	embedder ports.Embedder
	vectors  ports.VectorStore
	index    ports.VectorIndex
	store    ports.ResourceStore
	log      *slog.Logger
	// backlog counts resources changed by ingests whose vectors are still
	// to be computed in the background.
	backlog atomic.Int64
	// writes counts the ingests being applied; see Writing.
	writes atomic.Int32
	// quietFrom is when (Unix nanoseconds) the background vectors may go
	// on after the last write (see Writing).
	quietFrom atomic.Int64

	// gate is held shared by every update of the index and exclusively
	// while a kept graph is taken up or written (Boot, Persist), so the
	// graph taken up or kept is never half way through a change.
	gate sync.RWMutex
	// stopped is set by Persist: no update may follow.
	stopped atomic.Bool
	// booted says Boot ran to the end; failed that an update since may
	// have left the index short of the store (an error, a cancellation).
	// The index is kept at a stop only when it is booted, not failed, and
	// nothing is queued (Backlog), so a kept graph is the store's.
	booted, failed atomic.Bool
	// tried and resumed: Resume has looked for a kept index, and took it
	// up (under gate).
	tried, resumed bool
}

// ErrStopped is returned by updates after Persist.
var ErrStopped = errors.New("embedding: the vectors were kept for the next start; no more updates")

// Writing marks an ingest being applied until done is called. Meanwhile
// Update starts no new batch (one already started finishes: batchSize
// vectors, tens of milliseconds): an ingest answers once its text is
// searchable, its analysis runs on every core, and the graph inserts would
// take half of them, so the vectors (which lag anyway; hybrid search says
// by how much) wait for it. The vector work is not dropped, only put after
// the write.
//
// The background vectors (UpdateKeys, Follow) also stay out for a while
// after the write: half as long as it took, at most maxSettle. A bulk load's
// next batch is on its way then (the client's round trip, the server
// reading and decoding the body: about 100 ms after a write of 10,000 that
// took over a second); resuming in that gap, the graph's inserts took the
// cores the decoding needed (a million in batches ran 3–7 % faster with
// no vectors at all). A
// write of a few resources keeps them out for milliseconds, so steady small
// writes do not starve them; a bulk load does, until it ends, and then they
// catch up on every core.
func (s *Syncer) Writing() (done func()) {
	if s == nil {
		return func() {}
	}
	s.writes.Add(1)
	start := time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			now := time.Now()
			// The later of this write's settle and one set before (a
			// longer write that ended just before this short one).
			until := now.Add(settleAfter(now.Sub(start))).UnixNano()
			for {
				was := s.quietFrom.Load()
				if was >= until || s.quietFrom.CompareAndSwap(was, until) {
					break
				}
			}
			s.writes.Add(-1)
		})
	}
}

// maxSettle bounds how long the background vectors stay out after a write
// (see Writing).
const maxSettle = time.Second

// settleAfter is how long the background vectors stay out after a write
// that took took.
func settleAfter(took time.Duration) time.Duration { return min(took/2, maxSettle) }

// yieldPoll is how often a worker held back by an ingest looks again.
const yieldPoll = 2 * time.Millisecond

// held tells whether a worker should wait: an ingest is being applied, or
// (background) one ended less than its settle ago.
func (s *Syncer) held(background bool) bool {
	return s.writes.Load() > 0 || background && time.Now().UnixNano() < s.quietFrom.Load()
}

// AddBacklog records n more (negative: fewer) resources waiting for their
// vectors in the background.
func (s *Syncer) AddBacklog(n int) {
	if s != nil {
		s.backlog.Add(int64(n))
	}
}

// Loaded reports whether the vector index holds what the store held at
// the start: taken up from the last clean stop, or rebuilt by Boot.
func (s *Syncer) Loaded() bool { return s != nil && s.booted.Load() }

// Backlog is how many changed resources still wait for their vectors.
func (s *Syncer) Backlog() int {
	if s == nil {
		return 0
	}
	return int(s.backlog.Load())
}

// New returns a Syncer, or nil when no embedder is configured.
func New(e ports.Embedder, vs ports.VectorStore, ix ports.VectorIndex, st ports.ResourceStore, log *slog.Logger) *Syncer {
	if e == nil {
		return nil
	}
	return &Syncer{embedder: e, vectors: vs, index: ix, store: st, log: log}
}

// Embedder returns the configured embedder (nil on a nil Syncer).
func (s *Syncer) Embedder() ports.Embedder {
	if s == nil {
		return nil
	}
	return s.embedder
}

// Index returns the vector index (nil on a nil Syncer).
func (s *Syncer) Index() ports.VectorIndex {
	if s == nil {
		return nil
	}
	return s.index
}

// Boot takes up the vector index kept at the last clean stop when the
// store still holds the mark it was kept under (Resume, unless called
// before): nothing was written since, so nothing is embedded, read or
// inserted. Otherwise it drops other models' vectors, loads this model's
// vectors of live resources whose content is unchanged, and embeds the
// rest. It returns how many were loaded and how many computed.
func (s *Syncer) Boot(ctx context.Context) (loaded, computed int, err error) {
	if s == nil {
		return 0, 0, nil
	}
	if s.Resume(ctx) {
		return s.index.Len(), 0, nil
	}
	loaded, computed, err = s.rebuild(ctx)
	if err == nil && ctx.Err() == nil {
		s.booted.Store(true)
	}
	return loaded, computed, err
}

// Resume takes up the vector index kept at the last clean stop if the
// store's mark is the one it was kept under, by this embedder, and reports
// whether it did; Boot then has nothing left to do. Only the first call
// looks (what was kept is taken up once). It reads one file, so a start
// calls it before the text index is loaded, and readiness then includes
// the vectors.
func (s *Syncer) Resume(ctx context.Context) bool {
	if s == nil {
		return false
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	if !s.tried {
		s.tried = true
		s.resumed = s.resume(ctx)
		if s.resumed {
			s.booted.Store(true)
		}
	}
	return s.resumed
}

// resume is Resume's first look; the caller holds gate.
func (s *Syncer) resume(ctx context.Context) bool {
	kept, ok := s.index.(ports.VectorSnapshots)
	if !ok {
		return false
	}
	mark, err := s.store.IndexMark(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "reading the index mark failed; rebuilding the vector index", "error", err)
		mark = ""
	}
	t := time.Now()
	ok, err = kept.Resume(ctx, s.embedder.ID(), mark)
	if err != nil {
		s.log.WarnContext(ctx, "the vector index kept at the last stop cannot be taken up; rebuilding it", "error", err)
		return false
	}
	if ok {
		s.log.InfoContext(ctx, "vector index taken up from the last clean stop", "vectors", s.index.Len(), "took", time.Since(t).String())
	}
	return ok
}

// Persist keeps the vector index for the next start under mark, the mark
// the store keeps next (after Persist returns) for the text index. It is
// called once at stop, after the last write; updates after it fail with
// ErrStopped. An index short of the store (Boot not finished, an update
// that failed or was stopped, vectors still queued), or one that cannot
// be kept (NewCatalogIndex in memory), is not kept: the next start
// rebuilds it.
func (s *Syncer) Persist(ctx context.Context, mark string) error {
	if s == nil {
		return nil
	}
	kept, ok := s.index.(ports.VectorSnapshots)
	if !ok {
		return nil
	}
	s.stopped.Store(true)
	if !s.gate.TryLock() {
		// Not waited for: an embedder may take seconds to answer.
		return errors.New("vectors were still being updated")
	}
	defer s.gate.Unlock()
	switch {
	case !s.booted.Load():
		return errors.New("the vectors were still loading")
	case s.failed.Load():
		return errors.New("some vectors failed or were stopped since the start")
	case s.Backlog() > 0:
		return fmt.Errorf("%d resources were still waiting for their vectors", s.Backlog())
	}
	return kept.Persist(ctx, s.embedder.ID(), mark)
}

// rebuild is Boot without a kept index.
func (s *Syncer) rebuild(ctx context.Context) (loaded, computed int, err error) {
	id := s.embedder.ID()
	if n, err := s.vectors.DropVectorsExcept(ctx, id); err != nil {
		return 0, 0, err
	} else if n > 0 {
		s.log.Info("dropped vectors of another embedder", "count", n, "embedder", id)
	}
	stored := map[core.Key]ports.StoredVector{}
	err = s.vectors.ScanVectors(ctx, id, func(v ports.StoredVector) error {
		stored[v.Key] = v
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var stale []core.Resource
	var load []ports.StoredVector
	for _, c := range core.Catalogs {
		err := s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
			if sr.Resource.Withdrawn {
				return nil
			}
			if v, ok := stored[sr.Resource.Key()]; ok && v.Hash == sr.Hash && len(v.Vec) == ports.EmbeddingDim {
				load = append(load, v)
				return nil
			}
			stale = append(stale, sr.Resource)
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	stored = nil // load holds what is needed of it
	// Until the graph holds them all, hybrid search says how many are
	// missing (Backlog), rather than answer from part of them unsaid.
	left := len(load) + len(stale)
	s.AddBacklog(left)
	defer func() { s.AddBacklog(-left) }()
	// The graph is built on every core (UpsertMany), not one vector at a
	// time: at 100,000 vectors that is most of the boot. Each chunk's
	// vectors are let go once the graph has copied them, so the boot
	// holds the stored vectors about once, not twice.
	for len(load) > 0 {
		n := min(len(load), bootChunk)
		k, err := s.index.UpsertMany(ctx, load[:n])
		loaded += k
		clear(load[:n])
		load = load[n:]
		left -= n
		s.AddBacklog(-n)
		if err != nil {
			return loaded, 0, err
		}
	}
	computed, err = s.Update(ctx, stale, nil)
	return loaded, computed, err
}

// bootChunk is how many stored vectors Boot hands the index at a time.
const bootChunk = 16384

// Update embeds and stores the vectors of upserted resources and removes
// those of withdrawn ones. Partial failure leaves the failed resources
// without vectors (full-text still finds them) and is reported.
//
// Batches of batchSize are embedded, stored and indexed by up to
// GOMAXPROCS workers at once, and each batch goes into the index with
// UpsertMany, so a large ingest keeps every core busy whether embedding
// (the hash embedder is CPU work, a server is waiting) or the graph
// dominates. When a key comes twice, one worker does it all in order, so
// the last one wins as it did one by one.
func (s *Syncer) Update(ctx context.Context, upserted []core.Resource, removed []core.Key) (n int, err error) {
	if s == nil {
		return 0, nil
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer func() { s.leave(ctx, err) }()
	if err := s.index.Remove(ctx, removed); err != nil {
		return 0, err
	}
	workers := 0
	if repeats(upserted) {
		workers = 1
	}
	return s.run(ctx, len(upserted), workers, false, func(from, to int) ([]core.Resource, map[core.Key][]float32, error) {
		return upserted[from:to], nil, nil
	})
}

// UpdateKeys is Update of the resources stored under keys, read from the
// store batch by batch as they are embedded, so a caller queuing a large
// ingest holds keys rather than resources. A key whose resource is
// withdrawn or gone by then is skipped (its removal is the caller's).
func (s *Syncer) UpdateKeys(ctx context.Context, keys []core.Key, removed []core.Key) (n int, err error) {
	return s.updateKeys(ctx, keys, removed, 0)
}

// Follow is UpdateKeys for a change another replica wrote, which that
// replica embeds too: each batch first waits up to wait for the vectors of
// its resources' current content to be stored, and takes them (update);
// the ones still missing are embedded here. Once a wait runs out (the
// writer stopped, or is that far behind), the rest is embedded without
// waiting. Without a store that reads vectors by key (ports.VectorGetter)
// it is UpdateKeys.
func (s *Syncer) Follow(ctx context.Context, keys []core.Key, removed []core.Key, wait time.Duration) (n int, err error) {
	return s.updateKeys(ctx, keys, removed, wait)
}

func (s *Syncer) updateKeys(ctx context.Context, keys []core.Key, removed []core.Key, wait time.Duration) (n int, err error) {
	if s == nil {
		return 0, nil
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer func() { s.leave(ctx, err) }()
	if err := s.index.Remove(ctx, removed); err != nil {
		return 0, err
	}
	workers := 0
	if repeatedKeys(keys) {
		workers = 1
	}
	var gaveUp atomic.Bool // a wait ran out: embed the rest here
	return s.run(ctx, len(keys), workers, true, func(from, to int) ([]core.Resource, map[core.Key][]float32, error) {
		srs, err := s.store.GetMany(ctx, keys[from:to])
		if err != nil {
			return nil, nil, err
		}
		rs := make([]core.Resource, 0, len(srs))
		for _, sr := range srs {
			if !sr.Resource.Withdrawn {
				rs = append(rs, sr.Resource)
			}
		}
		if wait == 0 || gaveUp.Load() {
			return rs, nil, nil
		}
		stored, all := s.awaitStored(ctx, rs, wait)
		if !all {
			gaveUp.Store(true)
		}
		return rs, stored, nil
	})
}

// storedPoll is how often a replica waiting for another's vectors looks.
const storedPoll = 100 * time.Millisecond

// awaitStored waits up to wait until the vectors of rs's current content
// are stored, and returns those that are (nil when they could not be read)
// and whether they all were.
func (s *Syncer) awaitStored(ctx context.Context, rs []core.Resource, wait time.Duration) (map[core.Key][]float32, bool) {
	if _, ok := s.vectors.(ports.VectorGetter); !ok {
		return nil, false // nothing to wait for: embed here
	}
	deadline := time.Now().Add(wait)
	for {
		stored, err := s.storedCurrent(ctx, rs)
		if err != nil {
			return nil, false
		}
		if len(stored) == len(rs) {
			return stored, true
		}
		if !time.Now().Before(deadline) {
			return stored, false
		}
		t := time.NewTimer(storedPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return stored, false
		case <-t.C:
		}
	}
}

// storedCurrent returns the stored vectors of rs computed from their
// current content (nil without a store that reads vectors by key).
func (s *Syncer) storedCurrent(ctx context.Context, rs []core.Resource) (map[core.Key][]float32, error) {
	g, ok := s.vectors.(ports.VectorGetter)
	if !ok || len(rs) == 0 {
		return nil, nil
	}
	keys := make([]core.Key, len(rs))
	for i := range rs {
		keys[i] = rs[i].Key()
	}
	vs, err := g.GetVectors(ctx, s.embedder.ID(), keys)
	if err != nil {
		return nil, err
	}
	hash := make(map[core.Key]string, len(rs))
	for i := range rs {
		hash[keys[i]] = core.ContentHash(&rs[i])
	}
	out := make(map[core.Key][]float32, len(vs))
	for _, v := range vs {
		if h, ok := hash[v.Key]; ok && h == v.Hash && len(v.Vec) == ports.EmbeddingDim {
			out[v.Key] = v.Vec
		}
	}
	return out, nil
}

// enter begins an update of the index (see gate); leave ends it, noting
// an update that may have left the index short of the store.
func (s *Syncer) enter() error {
	s.gate.RLock()
	if s.stopped.Load() {
		s.gate.RUnlock()
		return ErrStopped
	}
	return nil
}

func (s *Syncer) leave(ctx context.Context, err error) {
	if err != nil || ctx.Err() != nil {
		s.failed.Store(true)
	}
	s.gate.RUnlock()
}

// run embeds, stores and indexes n resources in batches of batchSize,
// batch(from, to) giving those of [from, to) and, when it has just read
// them, their stored current vectors (update), on up to GOMAXPROCS workers
// (workers > 0: that many); background work also waits out a write's
// settle (Writing).
func (s *Syncer) run(ctx context.Context, n, workers int, background bool, batch func(from, to int) ([]core.Resource, map[core.Key][]float32, error)) (int, error) {
	batches := (n + batchSize - 1) / batchSize
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, batches)
	var (
		mu   sync.Mutex
		done int
		errs []error
		next atomic.Int64
		wg   sync.WaitGroup
	)
	work := func() {
		for {
			for s.held(background) { // an ingest is being applied, or was (see Writing)
				time.Sleep(yieldPoll)
			}
			b := int(next.Add(1) - 1)
			if b >= batches {
				return
			}
			start := b * batchSize
			rs, stored, err := batch(start, min(start+batchSize, n))
			k := 0
			if err == nil && len(rs) > 0 {
				k, err = s.update(ctx, rs, stored)
			}
			mu.Lock()
			done += k
			if err != nil {
				errs = append(errs, err)
			}
			mu.Unlock()
		}
	}
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return done, errors.Join(errs...)
}

// update embeds, stores and indexes one batch. A resource whose vector of
// its current content is stored already (another replica computed it for
// a change this one follows) is indexed from the store, not embedded.
// stored holds those vectors when the caller has just read them (a wait
// for them, awaitStored); nil reads them here.
func (s *Syncer) update(ctx context.Context, batch []core.Resource, stored map[core.Key][]float32) (int, error) {
	var err error
	if stored == nil {
		if stored, err = s.storedCurrent(ctx, batch); err != nil {
			return 0, err
		}
	}
	var taken []ports.StoredVector
	todo := batch
	if len(stored) > 0 {
		todo = make([]core.Resource, 0, len(batch)-len(stored))
		for i := range batch {
			if v, ok := stored[batch[i].Key()]; ok {
				taken = append(taken, ports.StoredVector{Key: batch[i].Key(), Vec: v})
				continue
			}
			todo = append(todo, batch[i])
		}
	}
	n := 0
	if len(taken) > 0 {
		if n, err = s.index.UpsertMany(ctx, taken); err != nil {
			return n, err
		}
	}
	if len(todo) == 0 {
		return n, nil
	}
	texts := make([]string, len(todo))
	for i := range todo {
		texts[i] = core.EmbeddingText(&todo[i])
	}
	vecs, err := s.embedder.EmbedDocuments(ctx, texts)
	if err == nil && len(vecs) != len(todo) {
		err = errors.New("embedder returned a different number of vectors than texts")
	}
	if err != nil {
		return n, err
	}
	rows := make([]ports.StoredVector, 0, len(todo))
	var none []core.Key
	for i := range todo {
		if len(vecs[i]) != ports.EmbeddingDim || zero(vecs[i]) {
			// Nothing to embed (no text): full-text only, and a vector
			// of an earlier version goes.
			none = append(none, todo[i].Key())
			continue
		}
		rows = append(rows, ports.StoredVector{Key: todo[i].Key(), Hash: core.ContentHash(&todo[i]), Vec: vecs[i]})
	}
	if err := s.index.Remove(ctx, none); err != nil {
		return n, err
	}
	if err := s.vectors.PutVectors(ctx, s.embedder.ID(), rows); err != nil {
		return n, err
	}
	m, err := s.index.UpsertMany(ctx, rows)
	return n + m, err
}

// repeatedKeys reports whether a key occurs twice.
func repeatedKeys(keys []core.Key) bool {
	seen := make(map[core.Key]struct{}, len(keys))
	for _, k := range keys {
		if _, ok := seen[k]; ok {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}

// repeats reports whether a key occurs twice.
func repeats(rs []core.Resource) bool {
	seen := make(map[core.Key]struct{}, len(rs))
	for i := range rs {
		k := rs[i].Key()
		if _, ok := seen[k]; ok {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}

func zero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}
