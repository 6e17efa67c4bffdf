// Package ingest loads releases into catalogs. Every ingest, whatever its
// origin (the publisher's JSON, its workbooks, the demo snapshot, a file or a
// JSON batch), goes through apply: normalise, hash, diff against the store,
// write atomically, update the index, publish events.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/ports"
)

// syncEmbedLimit is the largest ingest whose vectors are computed before
// the ingest answers; larger ones embed in the background.
const syncEmbedLimit = 2000

// Config tunes the ingest service.
type Config struct {
	// OriginBase is the host of the publisher's product sheets.
	OriginBase string
	// Interval between scheduled upstream ingests; 0 turns the schedule off.
	Interval time.Duration
	// BootIngest runs an upstream ingest when Start is called.
	BootIngest bool
	// BootTimeout bounds the whole boot ingest (all sources together).
	BootTimeout time.Duration
	// Metrics records each ingest (catalog, origin, outcome, duration);
	// nil records nothing.
	Metrics ports.Metrics
	// BootState, when set, is told when the boot ingest of every catalog
	// has finished or failed (readiness waits for it).
	BootState BootState
	// IndexChunk is the most resources one index change holds (see
	// indexChunks); 0 means DefaultIndexChunk.
	IndexChunk int
	// BatchChunk: a release of at most BatchChunk resources (a batch, or
	// an upstream release that small) is one index change, however large
	// IndexChunk is (see indexChunk); 0 means core.MaxBatchResources, and
	// a negative value none (every release in parts of IndexChunk).
	BatchChunk int
	// BulkGCPercent is the garbage collector's target (GOGC) while a
	// file or a change indexed in more than one part is applied (bulkGC;
	// a batch is one part, see indexChunk); 0 leaves the process's own.
	BulkGCPercent int
	// Feed and Locks are set when several replicas share the store
	// (follow.go); nil for a store of one process.
	Feed  ports.ChangeFeed
	Locks ports.RunLocks
	// FollowVectorWait is how long a replica waits, per batch, for the
	// vectors of another replica's change to be stored by that replica
	// before it embeds them itself (followVectors); 0 means
	// DefaultFollowVectorWait.
	FollowVectorWait time.Duration
}

// DefaultFollowVectorWait: the writing replica embeds its change right
// after its write (a small one before it answers), a batch of 64 in tens
// of milliseconds offline and about a second from a remote embedder.
const DefaultFollowVectorWait = 10 * time.Second

// BootState hears how the boot ingest goes (core.Visibility does).
type BootState interface {
	BootIngestDone(failed error)
}

// Sources are the places each catalog's data comes from.
type Sources struct {
	// Upstream lists, per catalog, the sources to try in order (JSON first,
	// then the Excel fallback).
	Upstream map[core.CatalogID][]ports.CatalogSource
	// Fixture is loaded only when every upstream source failed and the
	// catalog is empty.
	Fixture map[core.CatalogID]ports.CatalogSource
}

// Service implements ports.Ingester and runs the schedule.
type Service struct {
	cfg     Config
	store   ports.ResourceStore
	index   ports.TextIndex
	vis     *core.Visibility
	events  ports.EventPublisher
	sources Sources
	vectors *embedding.Syncer // nil when no embedder is configured
	log     *slog.Logger
	bulk    *bulkGC
	now     func() time.Time

	// applyMu serialises writes per catalog: the diff reads the store, so
	// two applies of one catalog must not interleave.
	applyMu map[core.CatalogID]*sync.Mutex
	// running marks an upstream ingest in flight per catalog, so they never
	// overlap; unlocks holds the run locks other replicas honour.
	runMu   sync.Mutex
	running map[core.CatalogID]bool
	unlocks map[core.CatalogID]func()

	// follows says how far the index holds each catalog of a shared store
	// (follow.go).
	follows map[core.CatalogID]*following

	vq vectorQueue
	wg sync.WaitGroup

	// whole is set once the index holds every catalog (resumed or rebuilt):
	// only then is it kept at stop (persist.go).
	whole atomic.Bool

	// life ends with Stop: the background vector queue runs on it.
	life    context.Context
	endLife context.CancelFunc
}

var _ ports.Ingester = (*Service)(nil)

// New returns an ingest service.
func New(cfg Config, store ports.ResourceStore, index ports.TextIndex, vis *core.Visibility, vectors *embedding.Syncer, events ports.EventPublisher, sources Sources, log *slog.Logger) *Service {
	cfg.Metrics = ports.MetricsOrNone(cfg.Metrics)
	if cfg.FollowVectorWait <= 0 {
		cfg.FollowVectorWait = DefaultFollowVectorWait
	}
	if cfg.IndexChunk <= 0 {
		cfg.IndexChunk = DefaultIndexChunk
	}
	if cfg.BatchChunk == 0 {
		cfg.BatchChunk = core.MaxBatchResources
	}
	s := &Service{
		cfg: cfg, store: store, index: index, vis: vis, vectors: vectors, events: events, sources: sources, log: log,
		bulk:    newBulkGC(cfg.BulkGCPercent),
		now:     time.Now,
		applyMu: map[core.CatalogID]*sync.Mutex{},
		running: map[core.CatalogID]bool{},
		unlocks: map[core.CatalogID]func(){},
		follows: map[core.CatalogID]*following{},
	}
	s.life, s.endLife = context.WithCancel(context.Background())
	for _, c := range core.Catalogs {
		s.applyMu[c] = &sync.Mutex{}
		s.follows[c] = &following{}
	}
	return s
}

// rebuildChunk is how many resources Rebuild indexes per commit, so
// readiness can report progress.
const rebuildChunk = 10000

// Rebuild loads every live resource from the store into the index; the
// index is derived state, the store the truth. Each catalog stays loading
// (its reads answer KindLoading) until its last resource is searchable, and
// holds its write lock meanwhile, so an ingest cannot slip between the scan
// and the index. A catalog that fails to load stays unsearchable, and says
// why, until the next start.
func (s *Service) Rebuild(ctx context.Context) (int, error) {
	if ok, err := s.resume(ctx); ok || err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, c := range core.Catalogs {
		k, err := s.rebuild(ctx, c)
		n += k
		if err != nil {
			// The other catalogs still load: they do not depend on it.
			s.vis.MarkFailed(c, err)
			errs = append(errs, fmt.Errorf("%s: %w", c, err))
		}
	}
	s.whole.Store(len(errs) == 0 && ctx.Err() == nil)
	return n, errors.Join(errs...)
}

func (s *Service) rebuild(ctx context.Context, c core.CatalogID) (int, error) {
	mu := s.applyMu[c]
	mu.Lock()
	defer mu.Unlock()
	if err := s.track(ctx, c); err != nil {
		return 0, err
	}
	var batch []core.Resource
	err := s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
		if !sr.Resource.Withdrawn {
			batch = append(batch, sr.Resource)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.vis.SetProgress(c, 0, len(batch))
	for i := 0; i < len(batch); i += rebuildChunk {
		chunk := batch[i:min(len(batch), i+rebuildChunk)]
		if err := s.index.Upsert(ctx, chunk); err != nil {
			return i, err
		}
		s.vis.SetProgress(c, i+len(chunk), len(batch))
	}
	s.vis.MarkLoaded(c)
	return len(batch), nil
}

// RunUpstream fetches a catalog from its publisher, trying each source in
// order. When all fail, an empty catalog gets the demo snapshot; a catalog
// that holds data keeps it untouched.
func (s *Service) RunUpstream(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error) {
	return s.observeRun(ctx, catalog, s.runUpstream)
}

// runTaken is RunUpstream for a caller that holds the catalog's run (begin).
func (s *Service) runTaken(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error) {
	return s.observeRun(ctx, catalog, func(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error) {
		srcs := s.sources.Upstream[catalog]
		if len(srcs) == 0 {
			return core.IngestResult{}, core.Invalidf("catalog %s has no upstream source; load it with POST /admin/resources", catalog)
		}
		res, err := s.runUpstreamLocked(ctx, catalog, srcs)
		return res, lostRun(ctx, catalog, err)
	})
}

// observeRun runs an upstream ingest and records it in the metrics.
func (s *Service) observeRun(ctx context.Context, catalog core.CatalogID, run func(context.Context, core.CatalogID) (core.IngestResult, error)) (core.IngestResult, error) {
	start := time.Now()
	res, err := run(ctx, catalog)
	origin := string(res.Origin)
	if origin == "" {
		origin = "upstream" // no source answered
	}
	s.observe(catalog, origin, err, start)
	return res, err
}

// observe records one ingest in the metrics.
func (s *Service) observe(catalog core.CatalogID, origin string, err error, start time.Time) {
	outcome := ports.OutcomeOK
	switch kind := core.KindOf(err); {
	case err == nil:
	case kind == core.KindInvalid, kind == core.KindBusy, kind == core.KindConflict, kind == core.KindLoading,
		kind == core.KindTooLarge, kind == core.KindNotFound, kind == core.KindUnauthorized:
		outcome = ports.OutcomeRefused
	default:
		outcome = ports.OutcomeFailed
	}
	label := "unknown" // a refused batch may name anything; labels stay a bounded set
	if c, err := core.ParseCatalog(string(catalog)); err == nil {
		label = string(c)
	}
	s.cfg.Metrics.ObserveIngest(label, origin, outcome, time.Since(start))
}

func (s *Service) runUpstream(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error) {
	srcs := s.sources.Upstream[catalog]
	if len(srcs) == 0 {
		return core.IngestResult{}, core.Invalidf("catalog %s has no upstream source; load it with POST /admin/resources", catalog)
	}
	ctx, err := s.begin(ctx, catalog)
	if err != nil {
		return core.IngestResult{}, err
	}
	defer s.end(catalog)
	res, err := s.runUpstreamLocked(ctx, catalog, srcs)
	return res, lostRun(ctx, catalog, err)
}

// runUpstreamLocked is RunUpstream once the catalog's run is taken (begin).
func (s *Service) runUpstreamLocked(ctx context.Context, catalog core.CatalogID, srcs []ports.CatalogSource) (core.IngestResult, error) {

	started := s.now()
	var failures []string
	for _, src := range srcs {
		rel, err := src.Fetch(ctx)
		if err == nil && len(rel.Resources) == 0 {
			err = errors.New("no resources in the answer")
		}
		if err != nil && ctx.Err() != nil {
			// Shutting down (or the caller gave up): not an outage of the publisher.
			return core.IngestResult{}, fmt.Errorf("ingest of %s interrupted: %w", catalog, ctx.Err())
		}
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, src.Name()) {
				msg = src.Name() + ": " + msg
			}
			failures = append(failures, msg)
			s.log.WarnContext(ctx, "upstream source failed", "catalog", catalog, "source", src.Name(), "error", err)
			continue
		}
		rel.Catalog = catalog
		res, err := s.apply(ctx, rel, started)
		if err != nil {
			return res, err
		}
		res.Errors = failures
		return res, nil
	}

	cause := strings.Join(failures, "; ")
	ev := core.NewEvent(core.EventCatalogUnreachable, catalog, s.now())
	ev.Error, ev.Version = cause, s.storedVersion(ctx, catalog)
	s.publish(ctx, ev)
	s.recordError(ctx, catalog, "publisher unreachable: "+cause)

	if fix := s.sources.Fixture[catalog]; fix != nil {
		res, loaded, err := s.loadFixture(ctx, catalog, fix, started)
		if err != nil {
			return res, err
		}
		if loaded {
			res.Errors = failures
			s.log.WarnContext(ctx, "publisher unreachable on an empty store; loaded the demo snapshot", "catalog", catalog, "resources", res.Upserted)
			return res, nil
		}
	}
	return core.IngestResult{}, core.Unavailablef(errors.New(cause), "the publisher of %s is unreachable (%s); the stored data was kept", catalog, cause)
}

// begin takes the catalog's upstream run, in this process and, over a
// shared store, across every replica; KindBusy when it is taken. The run
// goes on under the context it returns, which is cancelled (cause
// errRunLockLost) if the replicas' lock is lost meanwhile: another replica
// may start the run then, and two would overlap.
func (s *Service) begin(ctx context.Context, c core.CatalogID) (context.Context, error) {
	busy := &core.Error{Kind: core.KindBusy, Msg: fmt.Sprintf("an ingest of %s is already running; retry when it has finished", c)}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.running[c] {
		return ctx, busy
	}
	held := ports.HeldLock{Unlock: func() {}}
	if s.cfg.Locks != nil {
		h, ok, err := s.cfg.Locks.TryLock(ctx, "ingest:"+string(c))
		if err != nil {
			return ctx, core.Unavailablef(err, "store unavailable")
		}
		if !ok {
			return ctx, busy // another replica runs it
		}
		held = h
	}
	run, cancel := context.WithCancelCause(ctx)
	if held.Lost != nil {
		go func() {
			select {
			case <-held.Lost:
				s.log.Warn("the run lock was lost while the ingest ran (the connection to the shared store broke); stopping the run", "catalog", c)
				cancel(errRunLockLost)
			case <-run.Done():
			}
		}()
	}
	s.running[c], s.unlocks[c] = true, func() { cancel(nil); held.Unlock() }
	return run, nil
}

// errRunLockLost is the cause of a run's cancellation when its lock went.
var errRunLockLost = errors.New("the upstream run's lock across replicas was lost")

// lostRun names the cause of err when the run stopped because its lock
// went (begin); any other err passes unchanged.
func lostRun(ctx context.Context, c core.CatalogID, err error) error {
	if err == nil || !errors.Is(context.Cause(ctx), errRunLockLost) {
		return err
	}
	return core.Unavailablef(errRunLockLost, "the ingest of %s stopped: its lock across replicas was lost (the connection to the shared store broke), so another replica may run it; a change written before that is stored whole", c)
}

func (s *Service) end(c core.CatalogID) {
	s.runMu.Lock()
	s.running[c] = false
	unlock := s.unlocks[c]
	delete(s.unlocks, c)
	s.runMu.Unlock()
	if unlock != nil {
		unlock()
	}
}

// loadFixture applies the demo snapshot only if the catalog is still empty,
// checked under the catalog's write lock so it can never overwrite data.
func (s *Service) loadFixture(ctx context.Context, catalog core.CatalogID, fix ports.CatalogSource, started time.Time) (core.IngestResult, bool, error) {
	rel, err := fix.Fetch(ctx)
	if err != nil {
		return core.IngestResult{}, false, fmt.Errorf("demo snapshot: %w", err)
	}
	rel.Catalog, rel.Origin, rel.Complete = catalog, core.OriginFixture, false
	mu := s.applyMu[catalog]
	mu.Lock()
	defer mu.Unlock()
	unlock, err := s.writeLock(ctx, catalog)
	if err != nil {
		return core.IngestResult{}, false, err
	}
	defer unlock()
	n, err := s.store.Count(ctx, catalog)
	if err != nil {
		return core.IngestResult{}, false, core.Unavailablef(err, "store unavailable")
	}
	if n > 0 {
		return core.IngestResult{}, false, nil
	}
	done := s.vectors.Writing()
	defer done()
	res, err := s.applyLocked(ctx, rel, started, false, false, done)
	return res, err == nil, err
}

// ApplyBatch validates a ResourceBatch and upserts it. Invalid input is
// refused whole; nothing is stored.
func (s *Service) ApplyBatch(ctx context.Context, b core.ResourceBatch) (res core.IngestResult, err error) {
	start := time.Now()
	defer func() { s.observe(core.CatalogID(b.Catalog), string(core.OriginFile), err, start) }()
	rel, err := ReleaseFromBatch(b)
	if err != nil {
		return core.IngestResult{}, err
	}
	// The release was made for this call: the diff moves its resources
	// instead of copying them (owned).
	return s.applyMode(ctx, rel, s.now(), false, true)
}

// Apply upserts a release from any origin (files use it too).
func (s *Service) Apply(ctx context.Context, rel core.Release) (res core.IngestResult, err error) {
	start := time.Now()
	defer func() { s.observe(rel.Catalog, string(rel.Origin), err, start) }()
	return s.apply(ctx, rel, s.now())
}

func (s *Service) apply(ctx context.Context, rel core.Release, started time.Time) (core.IngestResult, error) {
	return s.applyMode(ctx, rel, started, false, false)
}

// applyMode applies (or, dryRun, diffs) a release. owned says the caller
// hands rel.Resources over: nobody else holds them (a file's release, made
// by the parser for this call), so the diff moves each resource into the
// write instead of copying it, and empties rel.Resources as it goes.
func (s *Service) applyMode(ctx context.Context, rel core.Release, started time.Time, dryRun, owned bool) (core.IngestResult, error) {
	return s.applyModeFed(ctx, rel, chunksOf(rel.Resources, s.cfg.IndexChunk), len(rel.Resources), started, dryRun, owned)
}

// applyModeFed is applyMode with the resources handed over by in (see
// applyFed).
func (s *Service) applyModeFed(ctx context.Context, rel core.Release, in feed, size int, started time.Time, dryRun, owned bool) (core.IngestResult, error) {
	mu, ok := s.applyMu[rel.Catalog]
	if !ok {
		return core.IngestResult{}, core.Invalidf("unknown catalog %q", rel.Catalog)
	}
	if err := s.vis.Loaded([]core.CatalogID{rel.Catalog}); err != nil {
		return core.IngestResult{}, err // a write now would wait for the whole load
	}
	mu.Lock()
	defer mu.Unlock()
	if !dryRun {
		unlock, err := s.writeLock(ctx, rel.Catalog)
		if err != nil {
			return core.IngestResult{}, err
		}
		defer unlock()
		// Background vectors give way to the write (Syncer.Writing);
		// released before this ingest's own vectors are computed.
		done := s.vectors.Writing()
		defer done()
		return s.applyFed(ctx, rel, in, size, started, dryRun, owned, done)
	}
	return s.applyFed(ctx, rel, in, size, started, dryRun, owned, func() {})
}

// applyLocked diffs the release against the store and, unless dryRun,
// writes it. A dry run reports the same counts plus each change's fields.
// owned: see applyMode.
func (s *Service) applyLocked(ctx context.Context, rel core.Release, started time.Time, dryRun, owned bool, written func()) (core.IngestResult, error) {
	return s.applyFed(ctx, rel, chunksOf(rel.Resources, s.cfg.IndexChunk), len(rel.Resources), started, dryRun, owned, written)
}

// applyFed is applyLocked with the release's resources handed over by in
// (rel.Resources unused); size is their number, or -1 when unknown (a file
// read as it is diffed: a bulk write).
func (s *Service) applyFed(ctx context.Context, rel core.Release, in feed, size int, started time.Time, dryRun, owned bool, written func()) (core.IngestResult, error) {
	cat := rel.Catalog
	meta, err := s.store.Meta(ctx, cat)
	if err != nil {
		return core.IngestResult{}, core.Unavailablef(err, "store unavailable")
	}
	// A bulk release, from its diff on (bulkGC): a file, or a release
	// indexed in more than one change. A batch (at most BatchChunk) is one
	// change whose memory its size bounds; at GOGC 50 its collections cost
	// a tenth of a bulk load's CPU (docs/PERFORMANCE.md 12zh).
	bulk := size < 0 || size > s.indexChunk(size)
	if bulk {
		s.bulk.enter()
		defer s.bulk.leave()
	}
	var before core.CatalogCounts
	if !dryRun {
		if before, err = s.countsBefore(ctx, meta); err != nil {
			return core.IngestResult{}, err
		}
	}
	d, err := s.newDiff(ctx, rel, size, dryRun, owned)
	if err != nil {
		return core.IngestResult{}, err
	}
	fed := pull(in)
	defer fed.stop()
	if w, ok := s.store.(ports.ChunkedApplier); ok && size < 0 && !dryRun && !rel.Complete {
		// A file, read as it is diffed: once it proves larger than one
		// chunk, it is diffed and written a chunk at a time through the
		// store's chunked change, beside readers while the index has
		// little to take (chunked.go).
		if first, ok := fed.next(); ok {
			if err := d.add(ctx, first); err != nil {
				return core.IngestResult{}, err
			}
			if second, more := fed.next(); more {
				return s.applyChunked(ctx, rel, d, second, fed, w, meta, before, started, written)
			}
		}
	}
	if err := d.addRest(ctx, fed); err != nil {
		return core.IngestResult{}, err
	}
	d.withdrawMissing()
	res, puts, changes, changed, toRemove := d.result(started, s.now()), d.puts, d.changes, d.changed, d.toRemove
	counts := d.counted(before)
	rel.Version = res.Version
	// What the diff read is copied into puts: let a large release's input
	// go before the index and the store take their share of memory.
	rel.Resources, d = nil, nil
	if dryRun {
		res.DryRun, res.Changes = true, changes
		return res, nil
	}

	// The event is written with the changes, in one transaction: a change
	// is never stored without it, whatever happens next.
	meta.Counts = counts
	events := s.record(&meta, rel, &res, changes)
	// The index change is prepared (analysed) and built (its segments
	// written, unseen by searches) first; the store write and the index
	// commit are then published together, so no reader sees the one
	// without the other. A store write that fails undoes the built change
	// (Discard). A failure of the index after the store was written is
	// repaired by the next boot's rebuild: logged, not lost data.
	//
	// A change larger than its index chunk (indexChunk: cfg.IndexChunk,
	// but a whole batch) is indexed in chunks, so a 100,000-row file holds
	// the analyses and the bluge batch of one chunk at a time rather than
	// of the whole file: the first chunk is prepared here, beside running
	// searches, the others after the store write, inside the publication
	// (readers wait for them, as they wait for the commit; the change
	// still appears whole and at once).
	//
	// Once the store holds the change, a large one lets go of its records
	// (puts) before the other chunks are indexed: each chunk's resources
	// are moved into a slice of their own, freed when the index has taken
	// it, and the vectors' queue gets the keys (see dropsPuts).
	chunks := indexChunks(changed, toRemove, s.indexChunk(size))
	if len(chunks) > 1 && !bulk { // a few resources that withdraw thousands, too
		s.bulk.enter()
		defer s.bulk.leave()
	}
	change, err := s.index.Prepare(ctx, resourcesAt(puts, chunks[0].upsert), chunks[0].remove)
	if err != nil {
		return core.IngestResult{}, core.Unavailablef(err, "indexing %s failed; nothing was changed", cat)
	}
	// Undone unless committed: a store write that fails leaves the index
	// as it was, and the undo runs after the publication, beside readers.
	defer change.Discard()
	// The first part's segments are written before the publication,
	// beside searches: readers wait only for the store write and the swap
	// (and for the later parts of a large change).
	if err := change.Build(); err != nil {
		return core.IngestResult{}, core.Unavailablef(err, "indexing %s failed; nothing was changed", cat)
	}
	drop := dropsPuts(chunks, changed)
	var vectorKeys []core.Key
	err = s.vis.Publish(func() error {
		if err := s.store.Apply(ctx, cat, ports.Changes{Put: puts, Meta: &meta, Events: events, IfCounter: s.ifCounter(meta)}); err != nil {
			if core.KindOf(err) == core.KindInvalid {
				// The store refuses a write larger than one transaction
				// holds: the release is the caller's to split.
				return &core.Error{Kind: core.KindTooLarge, Err: err, Msg: fmt.Sprintf(
					"%s: %d changed resources cannot be written at once (%v); split the release into smaller files or batches; nothing was changed",
					cat, len(puts), err)}
			}
			if core.KindOf(err) == core.KindConflict {
				return err // another replica wrote first (it does not take the write lock)
			}
			return core.Unavailablef(err, "writing %s failed; nothing was changed", cat)
		}
		s.wrote(cat, meta.Counter, len(puts))
		// Stored: the index follows whatever the caller does now.
		parts := laterParts(puts, chunks)
		if drop {
			vectorKeys, puts = keysAt(puts, changed), nil
		}
		if err := s.commitChunks(context.WithoutCancel(ctx), change, parts, chunks); err != nil {
			s.whole.Store(false) // not kept at stop: the next start rebuilds it
			s.log.ErrorContext(ctx, "index commit failed; the next start rebuilds the index", "catalog", cat, "error", err)
		}
		return nil
	})
	if err != nil {
		return core.IngestResult{}, err
	}
	written()
	// Vectors for new and changed resources only (vectors.go).
	if drop {
		s.queueVectors(cat, vectorKeys, toRemove)
	} else {
		s.updateVectors(ctx, cat, puts, changed, toRemove)
	}
	return s.applied(ctx, res, events), nil
}

// countsBefore returns the catalog's counts before a change: those its meta
// keeps, or, for a store written before they were kept, counted once by
// scanning it (the ingest then keeps them).
func (s *Service) countsBefore(ctx context.Context, meta core.CatalogMeta) (core.CatalogCounts, error) {
	if meta.Counts != nil {
		return *meta.Counts, nil
	}
	var c core.CatalogCounts
	err := s.store.Scan(ctx, meta.Catalog, func(sr ports.StoredResource) error {
		if sr.Resource.Withdrawn {
			c.Withdrawn++
		} else {
			c.Live++
		}
		return nil
	})
	if err != nil {
		return c, core.Unavailablef(err, "store unavailable")
	}
	return c, nil
}

// record fills in the meta an applied release leaves (version, last result,
// demo snapshot) and returns the events to store with it.
func (s *Service) record(meta *core.CatalogMeta, rel core.Release, res *core.IngestResult, changes []core.ResourceChange) []core.Event {
	meta.Catalog = rel.Catalog
	if rel.Version != "" {
		meta.Version = rel.Version
	}
	// The answer lists every changed id; the stored meta, which every
	// status request and ingest reads, keeps the counts: a million-row
	// file's ids were 17 MB of JSON decoded by each of those reads.
	last := *res
	last.Changed = nil
	meta.LastResult = &last
	meta.LastIngest = res.FinishedAt
	meta.LastError = ""
	switch {
	case rel.Origin == core.OriginFixture:
		meta.DemoSnapshot = first(rel.Version, "demo")
	case rel.Complete:
		meta.DemoSnapshot = ""
	}
	if res.Upserted > 0 || res.Withdrawn > 0 {
		return []core.Event{changedEvent(*res, changes, s.now())}
	}
	return nil
}

// applied logs a stored and indexed change, schedules its events'
// delivery and returns its answer.
func (s *Service) applied(ctx context.Context, res core.IngestResult, events []core.Event) core.IngestResult {
	res.FinishedAt = s.now().UTC() // the answer's time includes the write and the index update
	s.log.InfoContext(ctx, "ingest applied", "catalog", res.Catalog, "origin", res.Origin, "version", res.Version,
		"seen", res.Seen, "upserted", res.Upserted, "unchanged", res.Unchanged, "rejected", res.Rejected, "withdrawn", res.Withdrawn)
	for _, ev := range events {
		s.publish(ctx, ev) // already stored: this schedules the delivery
	}
	return res
}

// indexChunk is the most resources one index change of a release of size
// resources holds. A release of at most cfg.BatchChunk resources (by
// default one batch: core.MaxBatchResources, the most a POST
// /admin/resources takes) is one change: all of it is prepared and built
// before the publication, beside searches, which then wait only for the
// store write and the swap. In parts of 5,000 a batch of 10,000 had its
// second half analysed and its segments built inside the publication
// (docs/PERFORMANCE.md 12za). Files (size -1) and larger releases are
// indexed in parts of cfg.IndexChunk, which bounds their memory.
func (s *Service) indexChunk(size int) int {
	if size >= 0 && size <= s.cfg.BatchChunk {
		return max(s.cfg.IndexChunk, s.cfg.BatchChunk)
	}
	return s.cfg.IndexChunk
}

// DefaultIndexChunk is the most resources one index change holds: each
// costs its analysis and its share of a bluge segment in memory until the
// change is committed. A 100,000-row file (test/perf BenchmarkFileApply)
// peaks at a live heap of about 500 MB in chunks of 10,000, 440-470 MB in
// chunks of 5,000 and 400-420 MB in chunks of 2,500; each chunk also
// rebuilds the index's dictionaries (CPU that grows with the vocabulary),
// so 5,000 costs the apply about 5 % more CPU than 10,000, and 2,500 about
// 20 % (docs/PERFORMANCE.md 12k).
const DefaultIndexChunk = 5000

type indexPart struct {
	upsert []int // indexes in the change's puts
	remove []core.Key
}

// indexChunks cuts an index change into parts of at most size resources
// (always one part, perhaps empty). Each key occurs once in a change, so
// the parts may be committed one after the other.
func indexChunks(upsert []int, remove []core.Key, size int) []indexPart {
	var out []indexPart
	for len(upsert) > 0 || len(remove) > 0 || len(out) == 0 {
		n := min(len(upsert), size)
		m := min(len(remove), size-n)
		out = append(out, indexPart{upsert: upsert[:n:n], remove: remove[:m:m]})
		upsert, remove = upsert[n:], remove[m:]
	}
	return out
}

// commitChunks extends the prepared first part of an index change by the
// others (ports.IndexChange.Extend), then commits it, inside one
// publication (the caller's Visibility.Publish): readers see the whole
// change at once. The index's write lock stays held from the first part to
// the commit: committing each part and preparing the next left a gap in
// which another catalog's change could take the lock and then wait for
// this publication, while this one waited for the lock. parts holds the
// resources of each part after the first (laterParts); each is let go
// once taken (the index keeps its own copies).
func (s *Service) commitChunks(ctx context.Context, first ports.IndexChange, parts [][]core.Resource, chunks []indexPart) error {
	for k := 1; k < len(chunks); k++ {
		part := parts[k]
		parts[k] = nil
		if err := first.Extend(ctx, part, chunks[k].remove); err != nil {
			return err
		}
	}
	return first.Commit()
}

// laterParts copies the resources of each index part after the first out
// of puts, one slice per part (nil for the first).
func laterParts(puts []ports.StoredResource, chunks []indexPart) [][]core.Resource {
	parts := make([][]core.Resource, len(chunks))
	for k := 1; k < len(chunks); k++ {
		parts[k] = resourcesAt(puts, chunks[k].upsert)
	}
	return parts
}

// dropsPuts says whether an ingest lets go of its records (puts) once the
// store holds them: when its index change has several parts (laterParts
// holds their resources) and its vectors go to the background queue, which
// needs only keys (updateVectors embeds a change of at most syncEmbedLimit
// resources from puts before it answers). Of a 100,000-row file's change
// that is about 110 MB (the records, their texts and conversions) no
// longer held while the last chunks are analysed and the lexicon is at its
// largest.
func dropsPuts(chunks []indexPart, changed []int) bool {
	return len(chunks) > 1 && len(changed) > syncEmbedLimit
}

// keysAt returns the keys of the resources of puts at the indexes at.
func keysAt(puts []ports.StoredResource, at []int) []core.Key {
	out := make([]core.Key, len(at))
	for i, j := range at {
		out[i] = puts[j].Resource.Key()
	}
	return out
}

// resourcesAt copies the resources of puts at the indexes at: an index
// part's resources, made when it is prepared rather than all at once.
func resourcesAt(puts []ports.StoredResource, at []int) []core.Resource {
	out := make([]core.Resource, len(at))
	for i, j := range at {
		out[i] = puts[j].Resource
	}
	return out
}

// changedEvent describes an applied ingest: its counts and the first
// MaxEventChanges changes (withdrawals included), the rest counted.
func changedEvent(res core.IngestResult, changes []core.ResourceChange, at time.Time) core.Event {
	ev := core.NewEvent(core.EventCatalogChanged, res.Catalog, at)
	ev.Version, ev.IngestOrigin, ev.Counts = res.Version, res.Origin, core.CountsOf(res)
	ev.Changes = changes
	ev.ChangesOmitted = res.Upserted + res.Withdrawn - len(changes)
	return ev
}

// sameStored tells whether writing r over old would change nothing at all,
// including the fields the content hash leaves out.
func sameStored(old, r core.Resource) bool {
	return old.Version == r.Version && old.Origin == r.Origin && old.CategoryCode == r.CategoryCode &&
		old.Source == r.Source && !old.Withdrawn
}

// originOf builds the product-sheet link of a national resource.
// A catalog without public sheets has no origin; a national resource whose
// category code is unknown keeps a link an operator supplied.
func (s *Service) originOf(r *core.Resource) string {
	if !core.CatalogInfo(r.Catalog).HasOrigin {
		return ""
	}
	if r.CategoryCode == "" || s.cfg.OriginBase == "" {
		return r.Origin
	}
	return strings.TrimRight(s.cfg.OriginBase, "/") + "/detaljer/" + r.CategoryCode + "/" + r.ID
}

// publish hands an event over before the ingest answers; Publish records
// it durably first. A store that cannot record it has failed the ingest's
// own write too, so the error is logged rather than returned.
func (s *Service) publish(ctx context.Context, ev core.Event) {
	if err := s.events.Publish(context.WithoutCancel(ctx), ev); err != nil {
		s.log.ErrorContext(ctx, "publishing event failed", "type", ev.Type, "catalog", ev.Catalog, "error", err)
	}
}

// storedVersion is the dataset version the catalog still serves (empty
// when unknown); failure events carry it.
func (s *Service) storedVersion(ctx context.Context, catalog core.CatalogID) string {
	m, err := s.store.Meta(context.WithoutCancel(ctx), catalog)
	if err != nil {
		return ""
	}
	return m.Version
}

func (s *Service) recordError(ctx context.Context, catalog core.CatalogID, msg string) {
	err := s.updateMeta(ctx, catalog, func(m *core.CatalogMeta) { m.LastError = msg })
	if err != nil {
		s.log.ErrorContext(ctx, "recording ingest error failed", "catalog", catalog, "error", err)
	}
}

// updateMeta changes a catalog's metadata under its write lock.
func (s *Service) updateMeta(ctx context.Context, catalog core.CatalogID, fn func(*core.CatalogMeta)) error {
	mu := s.applyMu[catalog]
	mu.Lock()
	defer mu.Unlock()
	m, err := s.store.Meta(ctx, catalog)
	if err != nil {
		return err
	}
	m.Catalog = catalog
	before := m
	fn(&m)
	if reflect.DeepEqual(before, m) {
		// Nothing to write. Writing it all the same would, on a store
		// shared by replicas, put back what another replica wrote since
		// the read (the schedule it just moved, say).
		return nil
	}
	return s.store.PutMeta(ctx, m)
}
