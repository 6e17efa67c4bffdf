// Package badgerstore implements ports.ResourceStore on an on-disk Badger
// database (github.com/dgraph-io/badger/v4).
//
// Key layout (all keys are plain bytes; catalog ids never contain '/'):
//
//	res/<catalog>/<id>  -> JSON {"resource": core.Resource, "hash": string}
//	meta/<catalog>      -> JSON core.CatalogMeta
//	kv/<key>            -> raw bytes, optionally with a TTL (PutTTL/GetKV)
//	jnl/<catalog>/...   -> the undo journal of a large Apply (journal.go)
//
// Scan walks the res/<catalog>/ prefix, so resources come in byte order of
// their ids. Apply writes all its resources, the catalog meta and the
// events all or nothing, synced to disk before Apply returns: after a
// crash, a power loss or an error every resource is either wholly old or
// wholly new, the meta matches them, and the events are recorded exactly
// when the resources are.
//
// Transaction size: a small change is one Badger transaction. A change of
// more than oneTxnMax resources, more than txnValueBytes of value-log
// bytes, or more entries than Badger takes in one transaction (15% of the
// 16 MiB memtable in bytes, about 26,200 entries) is written through an
// undo journal (journal.go): the old records first, then the new ones, in
// transactions of at most journalChunk entries, then one transaction with
// the meta and the events is the commit point. Open rolls back a journal
// that a crash left before its commit point. So a change of any size
// applies atomically; a large one writes its records twice (old and new)
// and takes one synced transaction per chunk. The core's readers do not
// see a journal half done because core.Visibility holds them back while a
// change is published; a Backup taken meanwhile (a snapshot of the files)
// holds the journal, and Restore rolls it back.
//
// Space: rewritten values stay in the value log until Badger's value-log GC
// rewrites their file, which it does only for files its compactions have
// marked as mostly garbage; settle makes that happen as writes accumulate,
// so a catalog re-ingested all day keeps about its own size on disk and in
// memory (the value log is mapped).
package badgerstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.ResourceStore = (*Store)(nil)

// ErrClosed is what every method called after Close fails with, wrapped in
// a core.Error of KindUnavailable so drivers answer 503.
var ErrClosed = errors.New("badgerstore: store is closed")

const (
	resPrefix  = "res/"
	metaPrefix = "meta/"
	kvPrefix   = "kv/"
	whPrefix   = "wh/" // webhooks; layout in webhooks.go

	// memTableSize bounds the memory of the write path (two memtables) and
	// the transaction size (15% of it); see the package comment. Badger
	// allocates each memtable's arena whole on the Go heap (about 1.3
	// times this size with its batch slack), so it is part of the live
	// heap the garbage collector paces from: at 64 MiB it was the largest
	// single holder of the service's heap (83 MB of a 117 MB steady
	// state on the real catalog). Records of valueThreshold bytes or more
	// live in the value log, so a memtable holds keys and value pointers
	// (about 60 bytes a resource): 16 MiB still takes a 100,000-resource
	// catalog's keys before a flush.
	memTableSize = 16 << 20
	// valueLogFileSize is the size of a value-log file. Badger maps a new
	// file at twice this size and moves to the next file only between
	// transactions: a transaction with more values than fit in the mapping
	// grows it entry by entry, each growth syncing the whole file (a
	// 100,000-resource transaction took 86 s instead of 4), so large
	// changes are written in transactions of at most txnValueBytes.
	valueLogFileSize = 16 << 20
	// valueThreshold sends almost every resource record to the value log,
	// so a transaction's byte budget is spent on keys, not on resource JSON.
	valueThreshold = 256
	// gcInterval is how often the value log is compacted; ingests rewrite
	// changed resources, leaving their old values behind as garbage.
	gcInterval = 10 * time.Minute
	// settleFloor is the fewest value-log bytes written between two
	// settles; see settle.
	settleFloor = 16 << 20
	// releaseEvery is how many value-log bytes are written or read
	// between two releases of the mapped value log's pages (releaseVlog),
	// so what writing and reading leave resident stays about this much.
	releaseEvery = 32 << 20
	// flushKey is written and dropped to make Badger flush its memtable;
	// '~' sorts after every other prefix, so dropping it touches at most
	// the last table of each level.
	flushKey = "~flush"
)

// Store is a ResourceStore on Badger. It is safe for concurrent use.
type Store struct {
	db  *badger.DB
	log *zap.Logger

	// The gate makes Close wait for running calls and makes later calls fail
	// with ErrClosed: Badger panics when an iterator is created on a closed
	// DB, and its own closed check races with Close.
	mu       sync.Mutex
	idle     *sync.Cond // broadcast when inflight drops to zero
	inflight int
	closed   bool

	stopGC chan struct{}
	gcDone chan struct{}

	// indexMark is the text index's mark taken at open (indexmark.go).
	indexMark string

	// changes counts the writes of resources, metadata and vectors that
	// have ended (ports.WriteCounter).
	changes atomic.Uint64

	// writes is held shared by every call that writes and exclusively by
	// settle while Badger's writes are blocked (they would fail, not wait).
	writes sync.RWMutex
	// applyLocks orders the Applies of each catalog: shared by a change in
	// one transaction, exclusive for a journaled one (journal.go).
	applyLocks map[core.CatalogID]*sync.RWMutex
	// torn marks a catalog whose journal could not be rolled back after a
	// failed Apply: its next Apply goes through the journal, which rolls it
	// back first. Read and written under the catalog's applyLock.
	torn map[core.CatalogID]bool
	// pins are the read views of the catalogs with a chunked change
	// running (pin.go).
	pinMu sync.RWMutex
	pins  map[core.CatalogID]*pin
	// written counts value-log bytes written since the last settle;
	// settleAt is how many make the next one due (see settle).
	written  atomic.Int64
	settleAt atomic.Int64
	settleCh chan struct{}
	// unreleased counts value-log bytes written or read since the last
	// release (see releaseVlog); dir is the store's directory as the
	// kernel names it, noRelease set once the kernel refused.
	unreleased atomic.Int64
	dir        string
	noRelease  atomic.Bool

	finishLocks [64]sync.Mutex // see finishLock
	finishMu    sync.Mutex
	finishes    map[string]int // Finish calls per destination, see trimEvery
	fanOuts     atomic.Uint64  // FanOut calls, see histTrimEvery

	// decoded caches resources by key with the Badger version they were
	// decoded from: reads still go through a transaction (so they see
	// exactly the committed state), but skip JSON decoding, which
	// dominated the search path.
	decoded sync.Map     // string(key) -> cachedRecord
	cachedN atomic.Int64 // keys in decoded, at most maxDecoded
}

type cachedRecord struct {
	version uint64
	rec     ports.StoredResource
}

// emptyMemtable is how badger reports a memtable file it found empty at
// open (ristretto's z.NewFile).
const emptyMemtable = "Create a new file"

// Open opens (creating if needed) the store in dir.
func Open(dir string, log *zap.Logger) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(true). // a committed Apply survives power loss
		WithLogger(badgerLogger{log.Named("badger").Sugar()}).
		WithMemTableSize(memTableSize).
		WithNumMemtables(2).
		WithValueThreshold(valueThreshold).
		WithValueLogFileSize(valueLogFileSize).
		WithBlockCacheSize(8 << 20).
		WithNumCompactors(2)
	db, err := badger.Open(opts)
	if err != nil && strings.Contains(err.Error(), emptyMemtable) {
		// A crash right after badger created a memtable file leaves it
		// empty, and badger's open then fails on it, though not before
		// writing the file's header: the file now reads as an empty
		// memtable, and a second open goes through.
		log.Warn("reopening the store: badger found an empty memtable file a crash left", zap.Error(err))
		db, err = badger.Open(opts)
	}
	if err != nil {
		if le := lockedError(dir, err); le != nil {
			return nil, le
		}
		return nil, fmt.Errorf("badgerstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, log: log, stopGC: make(chan struct{}), gcDone: make(chan struct{}),
		settleCh: make(chan struct{}, 1), applyLocks: map[core.CatalogID]*sync.RWMutex{}, torn: map[core.CatalogID]bool{},
		pins: map[core.CatalogID]*pin{}}
	for _, c := range core.Catalogs {
		s.applyLocks[c] = new(sync.RWMutex)
	}
	s.idle = sync.NewCond(&s.mu)
	s.settleAt.Store(max(settleFloor, s.vlogBytes()/2))
	// The kernel names the mapped files by their real paths.
	if abs, err := filepath.Abs(dir); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			s.dir = real
		}
	}
	if err := s.takeIndexMark(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("badgerstore: open %s: %w", dir, err)
	}
	// A change cut by a crash mid-journal is rolled back before anything
	// reads the store.
	rolledBack, err := s.recoverJournals(context.Background())
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("badgerstore: open %s: rolling back an unfinished change: %w", dir, err)
	}
	if rolledBack {
		s.indexMark = "" // the data moved since any index was kept: rebuild it
	}
	log.Debug("badger store open", zap.String("dir", dir),
		zap.Int64("max_txn_entries", db.MaxBatchCount()), zap.Int64("max_txn_bytes", db.MaxBatchSize()))
	go s.gcLoop()
	return s, nil
}

// Close waits for running calls, then closes the database. Calls made after
// Close fail with ErrClosed; a second Close is a no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for s.inflight > 0 {
		s.idle.Wait()
	}
	s.mu.Unlock()
	close(s.stopGC)
	<-s.gcDone
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("badgerstore: close: %w", err)
	}
	return nil
}

// enter admits a call unless ctx is done or the store is closed; every
// successful enter must be paired with leave.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return core.Unavailablef(ErrClosed, "store: closed")
	}
	s.inflight++
	return nil
}

func (s *Store) leave() {
	s.mu.Lock()
	s.inflight--
	if s.inflight == 0 {
		s.idle.Broadcast()
	}
	s.mu.Unlock()
}

// enterWrite is enter for calls that write: it also holds the write gate
// shared, so settle can pause writers. Pair it with leaveWrite.
func (s *Store) enterWrite(ctx context.Context) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	s.writes.RLock()
	return nil
}

func (s *Store) leaveWrite() {
	s.writes.RUnlock()
	s.leave()
}

// wrote counts n bytes of values a call wrote and wakes the settle loop
// when enough have gathered. Values under the threshold live in the LSM
// tree, whose own compactions reclaim them, so only larger ones count.
func (s *Store) wrote(n int) {
	due := s.unreleased.Add(int64(n)) >= releaseEvery && !s.noRelease.Load()
	if s.written.Add(int64(n)) >= s.settleAt.Load() || due {
		s.wake()
	}
}

// read counts n bytes of a value read: a value read through the mapped
// value log stays resident as a written one does (a rebuild of the text
// index reads every resource, the background vectors every changed one),
// so reads make a release due as writes do.
func (s *Store) read(n int) {
	if s.unreleased.Add(int64(valueBytes(n))) >= releaseEvery && !s.noRelease.Load() {
		s.wake()
	}
}

// wake tells the settle loop that a settle or a release may be due; it
// never waits (a wake already pending covers this one).
func (s *Store) wake() {
	select {
	case s.settleCh <- struct{}{}:
	default:
	}
}

// valueBytes is what a value of n bytes adds to the value log.
func valueBytes(n int) int {
	if n < valueThreshold {
		return 0
	}
	return n
}

func (s *Store) gcLoop() {
	defer close(s.gcDone)
	t := time.NewTicker(gcInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopGC:
			return
		case <-t.C:
			s.collect()
			s.release()
		case <-s.settleCh:
			settled := s.written.Load() >= s.settleAt.Load()
			if settled {
				s.settle() // its value-log GC rewrites values too
			}
			if settled || s.unreleased.Load() >= releaseEvery {
				s.release()
			}
		}
	}
}

// settle gives the space of overwritten values back. Badger rewrites a
// value-log file only when its discard statistics say the file is mostly
// garbage, and only compactions fill those statistics, which run only after
// the memtable fills and is flushed. The memtable holds keys and value
// pointers, so at a steady pace of rewrites (the real catalog re-ingested
// every few seconds) it fills after thousands of them, and until then
// the value log, mapped into memory, grows by every rewritten value: 585 MB
// in a 30-minute soak (docs/PERFORMANCE.md 12d). So once as many bytes have
// been written as half the value log held after the last settle (at least
// settleFloor, so a bulk load of new resources settles a logarithmic number
// of times), settle flushes the memtable, compacts level 0 (which drops
// old versions and records where their values were), and lets the
// value-log GC rewrite the files that became mostly garbage. Writers of
// resources wait while the memtable is flushed, level 0 compacted and the
// value log collected; readers do not.
func (s *Store) settle() {
	start := time.Now()
	before := s.vlogBytes()
	s.writes.Lock()
	s.written.Store(0)
	err := s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(flushKey), nil) })
	if err == nil {
		// DropPrefix is Badger's one public way to flush the memtable: it
		// blocks writes, flushes every memtable without the prefix and
		// compacts level 0.
		err = s.db.DropPrefix([]byte(flushKey))
	}
	if err != nil {
		s.log.Warn("badger settle: flush", zap.Error(err))
	}
	// The value-log GC runs with the writers of resources paused too: a
	// rewrite reads the memtable's highest version (DB.MaxVersion, badger
	// v4.9) without the lock badger's write loop updates it under, a data
	// race the race detector reports when an Apply lands meanwhile. The
	// other writers (vectors, webhooks) still can; it is badger's to fix.
	s.collect()
	s.writes.Unlock()
	after := s.vlogBytes()
	s.settleAt.Store(max(settleFloor, after/2))
	s.log.Debug("badger settled", zap.Duration("took", time.Since(start)),
		zap.Int64("vlog_before", before), zap.Int64("vlog_after", after))
}

// release gives the mapped value log's pages back to the kernel
// (releaseVlog), unless the kernel has refused before.
func (s *Store) release() {
	if s.noRelease.Load() || s.dir == "" {
		return
	}
	s.unreleased.Store(0)
	ok, err := releaseVlog(s.dir)
	if !ok {
		s.noRelease.Store(true)
		s.log.Info("the mapped value log stays resident: the kernel has no MADV_PAGEOUT", zap.Error(err))
		return
	}
	if err != nil {
		s.log.Warn("badger: releasing the mapped value log", zap.Error(err))
	}
}

// collect runs the value-log GC until it finds nothing to reclaim. Each
// successful run rewrites one file.
func (s *Store) collect() {
	for {
		err := s.db.RunValueLogGC(0.5)
		if err != nil {
			if !errors.Is(err, badger.ErrNoRewrite) && !errors.Is(err, badger.ErrRejected) {
				s.log.Warn("badger value log gc", zap.Error(err))
			}
			return
		}
		select {
		case <-s.stopGC:
			return
		default:
		}
	}
}

// vlogBytes is the disk space the value log takes. Badger creates each
// file at twice its size and truncates it when full, so the space
// allocated, not the length, is what was written.
func (s *Store) vlogBytes() int64 {
	var n int64
	files, _ := filepath.Glob(filepath.Join(s.db.Opts().ValueDir, "*.vlog"))
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		n += allocated(fi)
	}
	return n
}

// record is the stored form of a resource.
type record struct {
	Resource core.Resource `json:"resource"`
	Hash     string        `json:"hash"`
}

func resKey(c core.CatalogID, id string) []byte { return []byte(resPrefix + string(c) + "/" + id) }
func resCatalogPrefix(c core.CatalogID) []byte  { return []byte(resPrefix + string(c) + "/") }
func metaKey(c core.CatalogID) []byte           { return []byte(metaPrefix + string(c)) }

func storeErr(op string, err error) error {
	return core.Unavailablef(err, "store: %s: %v", op, err)
}

// decode returns the resource of item, from the decoded cache when the
// cached copy has the item's version. Callers get their own copy.
func (s *Store) decode(item *badger.Item) (ports.StoredResource, error) {
	key := string(item.Key())
	c, cached := s.decoded.Load(key)
	if cached && c.(cachedRecord).version == item.Version() {
		r := c.(cachedRecord).rec
		return ports.StoredResource{Resource: r.Resource.Clone(), Hash: r.Hash}, nil
	}
	s.read(int(item.ValueSize()))
	r, err := decode(item)
	if err != nil || (!cached && s.cachedN.Load() >= maxDecoded) {
		return r, err // full: no copy for the cache (a scan of a large catalog reads past it)
	}
	c = cachedRecord{version: item.Version(), rec: ports.StoredResource{Resource: r.Resource.Clone(), Hash: r.Hash}}
	if _, had := s.decoded.Swap(key, c); !had && s.cachedN.Add(1) > maxDecoded {
		// Full: this key is not kept after all. The first keys read stay
		// (at most maxDecoded); a key already cached still follows its
		// newer versions.
		s.decoded.Delete(key)
		s.cachedN.Add(-1)
	}
	return r, nil
}

// maxDecoded bounds the decoded cache: every read resource used to be kept,
// so a process that read a catalog of 1,000,000 once (a rebuild, the
// background vectors reading each batch back) held all of them decoded.
// The real catalogs (about 750 resources) fit ten times over. It was
// 50,000: the first keys read stay, and in a large catalog those are
// whatever the background vectors read first, not what searches ask for,
// so the 86 MB they held at 100,000 resources (a decoded resource with its
// texts and conversions is about 1.7 kB) bought the search path little.
var maxDecoded int64 = 8192 // a variable for tests

func decode(item *badger.Item) (ports.StoredResource, error) {
	var rec record
	err := item.Value(func(v []byte) error { return json.Unmarshal(v, &rec) })
	if err != nil {
		return ports.StoredResource{}, fmt.Errorf("badgerstore: decode %q: %w", item.Key(), err)
	}
	return ports.StoredResource{Resource: rec.Resource, Hash: rec.Hash}, nil
}

// get reads one resource inside txn; found is false when the key is absent.
func (s *Store) get(txn *badger.Txn, key core.Key) (ports.StoredResource, bool, error) {
	item, err := txn.Get(resKey(key.Catalog, key.ID))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ports.StoredResource{}, false, nil
	}
	if err != nil {
		return ports.StoredResource{}, false, storeErr("get "+key.String(), err)
	}
	r, err := s.decode(item)
	return r, err == nil, err
}

// Get returns one resource.
func (s *Store) Get(ctx context.Context, key core.Key) (res ports.StoredResource, found bool, err error) {
	if err := s.enter(ctx); err != nil {
		return res, false, err
	}
	defer s.leave()
	err = s.view(key.Catalog, func(txn *badger.Txn) error {
		res, found, err = s.get(txn, key)
		return err
	})
	return res, found, err
}

// GetMany returns the existing resources of keys, in the order of keys, read
// from one snapshot per catalog (for a catalog with a chunked change
// running, its read view; pin.go).
func (s *Store) GetMany(ctx context.Context, keys []core.Key) ([]ports.StoredResource, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	out := make([]ports.StoredResource, 0, len(keys))
	err := s.views(func(txnOf func(core.CatalogID) *badger.Txn) error {
		for _, k := range keys {
			r, found, err := s.get(txnOf(k.Catalog), k)
			if err != nil {
				return err
			}
			if found {
				out = append(out, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindByID returns the resources with id, in the order of core.Catalogs.
func (s *Store) FindByID(ctx context.Context, id string) ([]ports.StoredResource, error) {
	keys := make([]core.Key, 0, len(core.Catalogs))
	for _, c := range core.Catalogs {
		keys = append(keys, core.Key{Catalog: c, ID: id})
	}
	return s.GetMany(ctx, keys)
}

// Scan calls fn for every resource of the catalog in id (byte) order, from
// one snapshot. An error from fn stops the scan and is returned as is. fn
// may call the store but not Close, which would wait for the scan itself.
func (s *Store) Scan(ctx context.Context, catalog core.CatalogID, fn func(ports.StoredResource) error) error {
	return s.each(ctx, catalog, resCatalogPrefix(catalog), true, func(item *badger.Item) error {
		r, err := s.decode(item)
		if err != nil {
			return err
		}
		return fn(r)
	})
}

// each calls fn with every item under prefix, in key order, from one
// snapshot: the read view of catalog while a chunked change of it runs
// (pin.go; "" for keys of no catalog). prefetch reads values ahead of fn,
// for a caller that reads every value whole; without it fn reads each in
// place.
func (s *Store) each(ctx context.Context, catalog core.CatalogID, prefix []byte, prefetch bool, fn func(*badger.Item) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	return s.view(catalog, func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = prefetch
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(it.Item()); err != nil {
				return err
			}
		}
		return nil
	})
}

var _ ports.StateScanner = (*Store)(nil)

// ScanStates calls fn with each resource's id, content hash and withdrawn
// flag, read from the end of its record (stateOf) instead of decoding it:
// the vector coverage reads these of every resource. A record that does
// not end as stateOf expects is decoded whole.
func (s *Store) ScanStates(ctx context.Context, catalog core.CatalogID, fn func(ports.ResourceState) error) error {
	prefix := resCatalogPrefix(catalog)
	return s.each(ctx, catalog, prefix, false, func(item *badger.Item) error {
		st := ports.ResourceState{ID: string(item.Key()[len(prefix):])}
		var ok bool
		err := item.Value(func(v []byte) error {
			st.Hash, st.Withdrawn, ok = stateOf(v)
			return nil
		})
		if err != nil {
			return storeErr("scan "+string(catalog), err)
		}
		s.read(int(item.ValueSize()))
		if !ok {
			r, err := decode(item)
			if err != nil {
				return err
			}
			st.Hash, st.Withdrawn = r.Hash, r.Resource.Withdrawn
		}
		return fn(st)
	})
}

// stateOf reads the content hash and the withdrawn flag from the end of a
// record as json.Marshal writes it: the resource, whose last field is
// withdrawn (omitted when false), then the hash,
//
//	{"resource":{…,"withdrawn":true},"hash":"…"}
//
// A quote inside a JSON string is escaped, so the last `},"hash":"` is the
// record's own, and `"withdrawn":true` right before it is the resource's
// field. ok is false for a record of another shape (a hash holding an
// escape): decode it.
func stateOf(v []byte) (hash string, withdrawn, ok bool) {
	const tag = `},"hash":"`
	if !bytes.HasSuffix(v, []byte(`"}`)) {
		return "", false, false
	}
	i := bytes.LastIndex(v, []byte(tag))
	if i < 0 {
		return "", false, false
	}
	h := v[i+len(tag) : len(v)-2]
	if bytes.IndexByte(h, '"') >= 0 || bytes.IndexByte(h, '\\') >= 0 {
		return "", false, false
	}
	return string(h), bytes.HasSuffix(v[:i], []byte(`"withdrawn":true`)), true
}

// Count returns how many resources the catalog holds, iterating keys only.
func (s *Store) Count(ctx context.Context, catalog core.CatalogID) (int, error) {
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.countKeys(catalog, resCatalogPrefix(catalog))
}

// countKeys counts the keys under prefix, reading no values, in the read
// view of catalog ("" for keys of no catalog) when it has one.
func (s *Store) countKeys(catalog core.CatalogID, prefix []byte) (int, error) {
	n := 0
	err := s.view(catalog, func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n, err
}

// Apply writes every Put, the Meta and the Events all or nothing: after an
// error, a crash or a power loss the store holds either the whole change or
// none of it. Resources must belong to catalog, which must be canonical, so
// that FindByID (which looks in core.Catalogs) sees everything Apply writes.
// An event whose id was recorded before is skipped, as by RecordEvent.
//
// A small change is one transaction; a large one (more than oneTxnMax
// resources, or more than Badger takes in one transaction) goes through the
// undo journal (journal.go).
func (s *Store) Apply(ctx context.Context, catalog core.CatalogID, ch ports.Changes) error {
	if err := ch.Check(catalog); err != nil {
		return err
	}
	defer s.changed()
	op := fmt.Sprintf("apply %d resources and %d events to %s", len(ch.Put), len(ch.Events), catalog)
	lock := s.applyLocks[catalog]
	if len(ch.Put) <= oneTxnMax {
		lock.RLock()
		err := errTxnValues // a torn catalog is rolled back by the journal first
		if !s.torn[catalog] {
			err = s.applyOne(ctx, catalog, ch)
		}
		lock.RUnlock()
		if !errors.Is(err, badger.ErrTxnTooBig) && !errors.Is(err, errTxnValues) {
			return s.writeErr(op, err)
		}
		// Too big after all (more values than txnValueBytes, or more than
		// Badger takes: long ids, records stored inline): journal it.
	}
	lock.Lock()
	defer lock.Unlock()
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	return s.writeErr(op, s.applyJournaled(ctx, catalog, ch))
}

// txnValueBytes bounds the value-log bytes (keys and values of records of
// valueThreshold or more) of one transaction of Apply; see
// valueLogFileSize.
var txnValueBytes = valueLogFileSize - 2<<20 // a variable for benchmarks

// errTxnValues: a change has more values than one transaction should
// write (txnValueBytes).
var errTxnValues = errors.New("badgerstore: more values than one transaction writes well")

// applyOne writes ch in one transaction; it fails with errTxnValues, having
// written nothing, when the change has more than txnValueBytes of values.
func (s *Store) applyOne(ctx context.Context, catalog core.CatalogID, ch ports.Changes) error {
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	vals, err := encodeRecords(ch.Put)
	if err != nil {
		return err
	}
	// Retried on conflict: the event checks read keys a concurrent
	// RecordEvent or FanOut may write.
	var n, vlog int // value bytes; value-log bytes (values and their keys)
	err = s.updateRetry(ctx, func(txn *badger.Txn) error {
		n, vlog = 0, 0
		for i, p := range ch.Put {
			v := vals[i]
			key := resKey(catalog, p.Resource.ID)
			if b := valueBytes(len(v)); b > 0 {
				n, vlog = n+b, vlog+len(key)+b
				if vlog > txnValueBytes {
					return errTxnValues
				}
			}
			if err := txn.Set(key, v); err != nil {
				return err
			}
		}
		if ch.Meta != nil {
			v, err := json.Marshal(ch.Meta)
			if err != nil {
				return fmt.Errorf("badgerstore: encode meta %s: %w", catalog, err)
			}
			if err := txn.Set(metaKey(catalog), v); err != nil {
				return err
			}
		}
		for _, ev := range ch.Events {
			if err := recordEvent(txn, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.wrote(n)
	}
	return err
}

// parallelEncodeMin is the fewest records encodeRecords encodes on every
// core: below it the goroutines cost more than they save.
const parallelEncodeMin = 512

// encodeRecords encodes the records of puts, a large change's on every
// core: an ingest writes inside its publication, with readers held back,
// and encoding 10,000 records is about 75 ms of one core.
func encodeRecords(puts []ports.StoredResource) ([][]byte, error) {
	vals := make([][]byte, len(puts))
	encode := func(from, to int) error {
		for i := from; i < to; i++ {
			v, err := json.Marshal(record{Resource: puts[i].Resource, Hash: puts[i].Hash})
			if err != nil {
				return fmt.Errorf("badgerstore: encode %s: %w", puts[i].Resource.Ref(), err)
			}
			vals[i] = v
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(puts)/parallelEncodeMin)
	if workers <= 1 {
		return vals, encode(0, len(puts))
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { errs[w] = encode(w*len(puts)/workers, (w+1)*len(puts)/workers) })
	}
	wg.Wait()
	return vals, errors.Join(errs...)
}

// writeErr classifies a failed write: a too-big transaction is the caller's
// to split or shrink, anything else is the store failing.
func (s *Store) writeErr(op string, err error) error {
	var ce *core.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, badger.ErrTxnTooBig):
		return &core.Error{Kind: core.KindInvalid, Err: err, Msg: fmt.Sprintf(
			"store: %s: too big for one transaction (limit %d entries, %d bytes of keys and small values)",
			op, s.db.MaxBatchCount(), s.db.MaxBatchSize())}
	case errors.As(err, &ce):
		return err
	}
	return storeErr(op, err)
}

// Meta returns the catalog's metadata, or a zero meta with Catalog set.
func (s *Store) Meta(ctx context.Context, catalog core.CatalogID) (core.CatalogMeta, error) {
	meta := core.CatalogMeta{Catalog: catalog}
	if err := s.enter(ctx); err != nil {
		return meta, err
	}
	defer s.leave()
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(metaKey(catalog))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return storeErr("meta "+string(catalog), err)
		}
		return item.Value(func(v []byte) error {
			if err := json.Unmarshal(v, &meta); err != nil {
				return fmt.Errorf("badgerstore: decode meta %s: %w", catalog, err)
			}
			return nil
		})
	})
	meta.Catalog = catalog
	return meta, err
}

var _ ports.WriteCounter = (*Store)(nil)

// Writes counts the writes of resources, catalog metadata and vectors that
// have ended; every write to the store passes through this process.
func (s *Store) Writes() uint64 { return s.changes.Load() }

// changed is deferred by every write of resources, metadata or vectors:
// the count moves once what the write made visible is there to read.
func (s *Store) changed() { s.changes.Add(1) }

// PutMeta stores the catalog's metadata.
func (s *Store) PutMeta(ctx context.Context, meta core.CatalogMeta) error {
	if meta.Catalog == "" {
		return core.Invalidf("store: meta without catalog")
	}
	return s.Apply(ctx, meta.Catalog, ports.Changes{Meta: &meta})
}

// Ping reads every catalog's meta key, so it fails when the store is closed
// or cannot be read.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	return s.db.View(func(txn *badger.Txn) error {
		for _, c := range core.Catalogs {
			if _, err := txn.Get(metaKey(c)); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
				return storeErr("ping", err)
			}
		}
		return nil
	})
}
