// Package pgstore implements the store ports on PostgreSQL through pgx v5
// (github.com/jackc/pgx/v5, pgxpool): the same semantics as badgerstore,
// for several replicas sharing one database.
//
// The schema is in migrations/*.sql, embedded, applied by goose at Open
// under a session advisory lock (migrate.go). Tables (see the migration):
//
//	catalogs              catalog -> meta (JSON of core.CatalogMeta), counter
//	resources             (catalog, id) -> hash, body (JSON), stamp
//	vectors               (embedder, catalog, id) -> hash, vec
//	kv                    key -> value, expires_at
//	stash                 id -> filename, data, stashed_at, expires_at
//	payments_spent        (kind, key) -> expires_at
//	webhook_*             destinations, outbox, seen, deliveries, attempts, history
//
// Every Apply is one transaction: its resources, the catalog's meta, its
// events in the outbox and the NOTIFY that announces it commit together or
// not at all, so a crash (of this process or of PostgreSQL) leaves every
// resource old or new.
//
// The change counter (ports.Changes.IfCounter): Apply locks the catalog's
// row (SELECT … FOR UPDATE), refuses with core.KindConflict when the
// caller's counter is stale, and a write that puts resources advances the
// counter by one and stamps its rows with it. Writes of one catalog are
// thus serialised by that row lock, and a reader's snapshot always holds a
// prefix of the catalog's changes, which is what ChangeFeed.Since relies on.
//
// There is no ports.Backup here: a PostgreSQL store is backed up with the
// database's own tools (pg_dump, or base backups and WAL archiving).
package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var (
	_ ports.ResourceStore = (*Store)(nil)
	_ ports.ChangeFeed    = (*Store)(nil)
	_ ports.RunLocks      = (*Store)(nil)
)

// ErrClosed is what every method called after Close fails with, wrapped in
// a core.Error of KindUnavailable so drivers answer 503.
var ErrClosed = errors.New("pgstore: store is closed")

// notifyChannel carries "<catalog>:<counter>" after every write that
// advanced a catalog's counter.
const notifyChannel = "climatesearch_changes"

// defaultMaxConns is the pool size when the URL does not set
// pool_max_conns: a scan holds a connection while its callback may use
// another, and every held run lock and the change feed hold one each.
const defaultMaxConns = 16

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	log  *zap.Logger

	closed  atomic.Bool
	done    chan struct{} // closed by Close: ends Watch
	closeMu sync.Mutex

	fanOuts atomic.Uint64 // FanOut calls, see histTrimEvery
	spends  atomic.Uint64 // Spend calls, see ledgerSweepEvery

	// decoded caches resources by key with their stamp (GetMany).
	decoded sync.Map     // core.Key -> *cachedResource (never changed once stored)
	cachedN atomic.Int64 // keys in decoded, at most maxDecoded

	locksMu sync.Mutex
	locks   map[*heldLock]struct{} // run locks held (feed.go)
}

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string), applies the migrations it lacks and returns the
// store. Replicas opening the same database at once migrate it once.
func Open(ctx context.Context, url string, log *zap.Logger) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, core.Invalidf("pgstore: bad database URL: %v", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "climatesearch"
	}
	if err := migrate(ctx, cfg.ConnConfig, log); err != nil {
		return nil, unavailable("migrate", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, unavailable("open", err)
	}
	s := &Store{pool: pool, log: log, done: make(chan struct{})}
	if err := s.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	log.Debug("postgres store open", zap.String("host", cfg.ConnConfig.Host),
		zap.String("database", cfg.ConnConfig.Database))
	return s, nil
}

// Close ends the change feeds, waits for the connections in use to come
// back and closes the pool. Calls made after Close fail with ErrClosed; a
// second Close is a no-op.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	close(s.done)
	s.releaseLocks()
	s.pool.Close()
	return nil
}

// enter refuses a call when ctx is done or the store is closed.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return core.Unavailablef(ErrClosed, "store: closed")
	}
	return nil
}

// unavailable wraps a failure of the database in a KindUnavailable error.
func unavailable(op string, err error) error {
	return core.Unavailablef(err, "store: %s: %v", op, err)
}

// dbErr classifies a failed call: the caller's context error as is, a core
// error as is, data PostgreSQL refuses (a NUL byte in a text, a value too
// large) as invalid, anything else as the store being unavailable.
func (s *Store) dbErr(ctx context.Context, op string, err error) error {
	var ce *core.Error
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return ctx.Err()
	case s.closed.Load():
		return core.Unavailablef(ErrClosed, "store: %s: closed", op)
	case errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "54")):
		// Class 22 (data exception), 54 (program limit exceeded).
		return &core.Error{Kind: core.KindInvalid, Err: err, Msg: fmt.Sprintf("store: %s: %v", op, err)}
	}
	return unavailable(op, err)
}

// retryable tells whether a failed transaction may be run again from
// scratch: PostgreSQL aborted it for a serialization failure or a
// deadlock, or it failed before anything reached the server (a pooled
// connection that died while idle, e.g. across a restart of PostgreSQL).
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}

const txRetries = 5

// tx runs fn in a read-committed transaction, again from scratch when
// retryable says so.
func (s *Store) tx(ctx context.Context, op string, fn func(pgx.Tx) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	var err error
	for attempt := 0; attempt <= txRetries; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	return s.dbErr(ctx, op, err)
}

// record is the JSON of a resource row's body: the resource itself.
func encodeResource(r *core.Resource) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("pgstore: encode %s: %w", r.Ref(), err)
	}
	return b, nil
}

func decodeResource(body []byte, hash string) (ports.StoredResource, error) {
	var sr ports.StoredResource
	if err := json.Unmarshal(body, &sr.Resource); err != nil {
		return sr, fmt.Errorf("pgstore: decode resource: %w", err)
	}
	sr.Hash = hash
	return sr, nil
}

// Get returns one resource.
func (s *Store) Get(ctx context.Context, key core.Key) (ports.StoredResource, bool, error) {
	rs, err := s.GetMany(ctx, []core.Key{key})
	if err != nil || len(rs) == 0 {
		return ports.StoredResource{}, false, err
	}
	return rs[0], true, nil
}

// cachedResource is a decoded resource with the stamp of the row it was
// decoded from. Every write of a resource stamps it with a new counter of
// its catalog, so (key, stamp) names one content.
type cachedResource struct {
	stamp int64
	sr    ports.StoredResource
}

// maxDecoded bounds the decoded cache, as badger's: the first keys read
// stay; a key already cached follows its newer versions.
var maxDecoded int64 = 50000 // a variable for tests

// GetMany returns the existing resources of keys, in the order of keys,
// read by one statement (one snapshot). The statement sends the stamp of
// each key's decoded copy and the database returns the body only of rows
// stamped otherwise, so a page of search results already read costs one
// round trip and no JSON decoding (the copies handed out are clones).
func (s *Store) GetMany(ctx context.Context, keys []core.Key) ([]ports.StoredResource, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return []ports.StoredResource{}, nil
	}
	cached := make(map[core.Key]cachedResource, len(keys))
	cats := make([]string, 0, len(keys))
	ids := make([]string, 0, len(keys))
	stamps := make([]int64, 0, len(keys))
	for _, k := range keys {
		if _, dup := cached[k]; dup {
			continue
		}
		c := cachedResource{stamp: -1}
		if v, ok := s.decoded.Load(k); ok {
			c = *v.(*cachedResource)
		}
		cached[k] = c
		cats, ids, stamps = append(cats, string(k.Catalog)), append(ids, k.ID), append(stamps, c.stamp)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT r.catalog, r.id, r.stamp, r.hash, CASE WHEN r.stamp = k.stamp THEN NULL ELSE r.body END
		FROM resources r JOIN unnest($1::text[], $2::text[], $3::bigint[]) AS k(catalog, id, stamp)
		  ON r.catalog = k.catalog AND r.id = k.id`, cats, ids, stamps)
	if err != nil {
		return nil, s.dbErr(ctx, "get many", err)
	}
	found := make(map[core.Key]ports.StoredResource, len(cached))
	var cat, id, hash string
	var stamp int64
	var body []byte
	_, err = pgx.ForEachRow(rows, []any{&cat, &id, &stamp, &hash, &body}, func() error {
		k := core.Key{Catalog: core.CatalogID(cat), ID: id}
		if body == nil {
			found[k] = cached[k].sr // the copy of this very stamp
			return nil
		}
		sr, err := decodeResource(body, hash)
		if err != nil {
			return err
		}
		found[k] = sr
		s.keepDecoded(k, &cachedResource{stamp: stamp, sr: ports.StoredResource{Resource: sr.Resource.Clone(), Hash: sr.Hash}})
		return nil
	})
	if err != nil {
		return nil, s.dbErr(ctx, "get many", err)
	}
	out := make([]ports.StoredResource, 0, len(found))
	for _, k := range keys {
		if sr, ok := found[k]; ok {
			// Every result is a copy of its own: callers may change it.
			out = append(out, ports.StoredResource{Resource: sr.Resource.Clone(), Hash: sr.Hash})
		}
	}
	return out, nil
}

// keepDecoded caches c for k unless the cache is full of other keys; a
// newer stamp replaces an older one, never the other way round.
func (s *Store) keepDecoded(k core.Key, c *cachedResource) {
	for {
		old, had := s.decoded.Load(k)
		if had {
			if old.(*cachedResource).stamp >= c.stamp || s.decoded.CompareAndSwap(k, old, c) {
				return
			}
			continue
		}
		if s.cachedN.Add(1) > maxDecoded {
			s.cachedN.Add(-1)
			return
		}
		if _, loaded := s.decoded.LoadOrStore(k, c); !loaded {
			return
		}
		s.cachedN.Add(-1) // stored meanwhile by another reader: compare again
	}
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
// one snapshot (one statement, its rows streamed). An error from fn stops
// the scan and is returned as is. fn may call the store: the scan holds
// one pooled connection.
func (s *Store) Scan(ctx context.Context, catalog core.CatalogID, fn func(ports.StoredResource) error) error {
	op := "scan " + string(catalog)
	var body []byte
	var hash string
	return s.eachRow(ctx, op, []any{&body, &hash}, func() error {
		sr, err := decodeResource(body, hash)
		if err != nil {
			return s.dbErr(ctx, op, err)
		}
		return fn(sr)
	}, `SELECT body, hash FROM resources WHERE catalog = $1 ORDER BY id`, string(catalog))
}

// eachRow runs query and calls fn with each row scanned into dest. An
// error of fn is returned as it is; the database's as op's (dbErr).
func (s *Store) eachRow(ctx context.Context, op string, dest []any, fn func() error, query string, args ...any) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return s.dbErr(ctx, op, err)
	}
	var fnErr error
	_, err = pgx.ForEachRow(rows, dest, func() error {
		if err := fn(); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	return s.dbErr(ctx, op, err)
}

var _ ports.StateScanner = (*Store)(nil)

// ScanStates calls fn with each resource's id, content hash and withdrawn
// flag, in id order, without sending or decoding the resources: PostgreSQL
// reads the flag from the stored JSON.
func (s *Store) ScanStates(ctx context.Context, catalog core.CatalogID, fn func(ports.ResourceState) error) error {
	var st ports.ResourceState
	return s.eachRow(ctx, "scan states of "+string(catalog), []any{&st.ID, &st.Hash, &st.Withdrawn}, func() error { return fn(st) },
		`SELECT id, hash, COALESCE((body->>'withdrawn')::boolean, false) FROM resources WHERE catalog = $1 ORDER BY id`, string(catalog))
}

// Count returns how many resources the catalog holds.
func (s *Store) Count(ctx context.Context, catalog core.CatalogID) (int, error) {
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM resources WHERE catalog = $1`, string(catalog)).Scan(&n)
	return n, s.dbErr(ctx, "count "+string(catalog), err)
}

// putChunk bounds the rows of one INSERT of Apply (each row is three
// array elements; the arrays of one statement are sent together).
const putChunk = 2000

// Apply writes every Put, the Meta and the Events in one transaction: all
// or nothing. It locks the catalog's row first, so the writes of a catalog
// are serialised across every replica; with IfCounter set it refuses a
// stale diff with core.KindConflict. A write that puts resources advances
// the counter by one, stamps the rows with it and announces
// "<catalog>:<counter>" on the notify channel at commit. An event whose id
// was recorded before is skipped, as by RecordEvent.
func (s *Store) Apply(ctx context.Context, catalog core.CatalogID, ch ports.Changes) error {
	if err := ch.Check(catalog); err != nil {
		return err
	}
	if err := s.enter(ctx); err != nil {
		return err
	}
	// Encoded once, outside the transaction (and its retries); a repeated
	// id keeps its last Put, as in one badger transaction.
	last := make(map[string]int, len(ch.Put))
	for i, p := range ch.Put {
		last[p.Resource.ID] = i
	}
	ids := make([]string, 0, len(last))
	hashes := make([]string, 0, len(last))
	bodies := make([]string, 0, len(last))
	for i := range ch.Put {
		p := &ch.Put[i]
		if last[p.Resource.ID] != i {
			continue
		}
		b, err := encodeResource(&p.Resource)
		if err != nil {
			return err
		}
		ids, hashes, bodies = append(ids, p.Resource.ID), append(hashes, p.Hash), append(bodies, string(b))
	}
	var meta []byte
	if ch.Meta != nil {
		m := *ch.Meta
		m.Counter = 0 // the store's, kept in its own column
		var err error
		if meta, err = json.Marshal(m); err != nil {
			return fmt.Errorf("pgstore: encode meta %s: %w", catalog, err)
		}
	}
	events, err := encodeEvents(ch.Events)
	if err != nil {
		return err
	}
	op := fmt.Sprintf("apply %d resources and %d events to %s", len(ch.Put), len(ch.Events), catalog)
	return s.tx(ctx, op, func(tx pgx.Tx) error {
		counter, err := lockCatalog(ctx, tx, catalog)
		if err != nil {
			return err
		}
		if ch.IfCounter != nil && *ch.IfCounter != counter {
			return &core.Error{Kind: core.KindConflict, Msg: fmt.Sprintf(
				"store: apply to %s: the catalog changed since it was read (counter %d, the write expected %d); read it again",
				catalog, counter, *ch.IfCounter)}
		}
		if len(ids) > 0 {
			counter++
			for lo := 0; lo < len(ids); lo += putChunk {
				hi := min(len(ids), lo+putChunk)
				_, err := tx.Exec(ctx, `
					INSERT INTO resources (catalog, id, hash, body, stamp)
					SELECT $1, u.id, u.hash, u.body::json, $2
					FROM unnest($3::text[], $4::text[], $5::text[]) AS u(id, hash, body)
					ON CONFLICT (catalog, id) DO UPDATE
					SET hash = EXCLUDED.hash, body = EXCLUDED.body, stamp = EXCLUDED.stamp`,
					string(catalog), int64(counter), ids[lo:hi], hashes[lo:hi], bodies[lo:hi])
				if err != nil {
					return err
				}
			}
		}
		if len(ids) > 0 || meta != nil {
			_, err := tx.Exec(ctx, `UPDATE catalogs SET counter = $2, meta = coalesce($3::json, meta) WHERE catalog = $1`,
				string(catalog), int64(counter), meta)
			if err != nil {
				return err
			}
		}
		if err := recordEvents(ctx, tx, events); err != nil {
			return err
		}
		if len(ids) > 0 {
			_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, fmt.Sprintf("%s:%d", catalog, counter))
			return err
		}
		return nil
	})
}

// lockCatalog creates the catalog's row when missing and locks it until
// the transaction ends, returning its counter.
func lockCatalog(ctx context.Context, tx pgx.Tx, catalog core.CatalogID) (uint64, error) {
	var counter int64
	err := tx.QueryRow(ctx, `
		INSERT INTO catalogs (catalog) VALUES ($1)
		ON CONFLICT (catalog) DO UPDATE SET catalog = EXCLUDED.catalog
		RETURNING counter`, string(catalog)).Scan(&counter)
	// ON CONFLICT DO UPDATE locks the existing row, as SELECT … FOR UPDATE
	// would, and also covers a catalog written for the first time.
	return uint64(counter), err
}

// Meta returns the catalog's metadata with its change counter, or a zero
// meta with Catalog set.
func (s *Store) Meta(ctx context.Context, catalog core.CatalogID) (core.CatalogMeta, error) {
	meta := core.CatalogMeta{Catalog: catalog}
	if err := s.enter(ctx); err != nil {
		return meta, err
	}
	var raw []byte
	var counter int64
	err := s.pool.QueryRow(ctx, `SELECT meta, counter FROM catalogs WHERE catalog = $1`, string(catalog)).Scan(&raw, &counter)
	if errors.Is(err, pgx.ErrNoRows) {
		return meta, nil
	}
	if err != nil {
		return meta, s.dbErr(ctx, "meta "+string(catalog), err)
	}
	if raw != nil {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return meta, fmt.Errorf("pgstore: decode meta %s: %w", catalog, err)
		}
	}
	meta.Catalog, meta.Counter = catalog, uint64(counter)
	return meta, nil
}

// PutMeta stores the catalog's metadata; the counter stays the stored one.
func (s *Store) PutMeta(ctx context.Context, meta core.CatalogMeta) error {
	if meta.Catalog == "" {
		return core.Invalidf("store: meta without catalog")
	}
	return s.Apply(ctx, meta.Catalog, ports.Changes{Meta: &meta})
}

// Ping fails when PostgreSQL cannot be reached (or the store is closed).
// The pool replaces dead connections by itself, so Ping works again once
// PostgreSQL is back.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM catalogs LIMIT 1`).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	return s.dbErr(ctx, "ping", err)
}

// IndexMark returns "": the text index lives on each replica's own disk,
// and a store shared by several replicas cannot tell that no other replica
// wrote since this one kept its index, so every replica rebuilds its index
// from the store at start (and then follows the ChangeFeed).
func (s *Store) IndexMark(context.Context) (string, error) { return "", nil }

// SetIndexMark keeps nothing; see IndexMark.
func (s *Store) SetIndexMark(context.Context, string) error { return nil }
