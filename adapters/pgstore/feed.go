package pgstore

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Since calls fn for every resource of the catalog stamped after `after`,
// in stamp (then id) order, from one snapshot, and returns the stamp of
// the last one (after when there was none). Writes of a catalog commit in
// counter order (Apply holds the catalog's row lock from the counter's
// read to its commit), so a snapshot holds every change up to some counter
// and none after it: nothing stamped at or below the returned counter can
// appear later.
func (s *Store) Since(ctx context.Context, catalog core.CatalogID, after uint64, fn func(ports.StoredResource) error) (uint64, error) {
	if err := s.enter(ctx); err != nil {
		return after, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT body, hash, stamp FROM resources WHERE catalog = $1 AND stamp > $2
		ORDER BY stamp, id`, string(catalog), int64(after))
	if err != nil {
		return after, s.dbErr(ctx, "changes of "+string(catalog), err)
	}
	last := after
	var fnErr error
	var body []byte
	var hash string
	var stamp int64
	_, err = pgx.ForEachRow(rows, []any{&body, &hash, &stamp}, func() error {
		sr, err := decodeResource(body, hash)
		if err != nil {
			return err
		}
		if err := fn(sr); err != nil {
			fnErr = err
			return err
		}
		last = uint64(stamp)
		return nil
	})
	if fnErr != nil {
		return last, fnErr
	}
	return last, s.dbErr(ctx, "changes of "+string(catalog), err)
}

// listenerName is the application_name of Watch's connection, so an
// operator (or a test) can tell it in pg_stat_activity.
const listenerName = "climatesearch-watch"

// Watch backoff after a lost connection, and how long the listener waits
// for a notification before it checks that its connection still answers.
const (
	watchBackoffMin = 100 * time.Millisecond
	watchBackoffMax = 5 * time.Second
	watchProbe      = 15 * time.Second
)

// Watch LISTENs on a connection of its own (outside the pool) and calls fn
// for every announced change until ctx ends or the store is closed. At
// every (re)connection, once it listens, it first calls fn with every
// catalog's current counter, so a change announced while it was away is
// not missed. A lost connection is reopened with a backoff (100 ms,
// doubling up to 5 s).
func (s *Store) Watch(ctx context.Context, fn func(catalog core.CatalogID, counter uint64)) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	backoff := watchBackoffMin
	for {
		listened, err := s.listen(ctx, fn)
		if s.closed.Load() {
			return core.Unavailablef(ErrClosed, "store: watch: closed")
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if listened {
			backoff = watchBackoffMin
		}
		s.log.Warn("postgres change feed: connection lost; reconnecting", zap.Error(err), zap.Duration("in", backoff))
		select {
		case <-ctx.Done():
			continue // reported above on the next round
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, watchBackoffMax)
	}
}

// listen runs one connection of Watch until it fails; listened tells
// whether it got as far as listening.
func (s *Store) listen(ctx context.Context, fn func(core.CatalogID, uint64)) (listened bool, err error) {
	cc := s.pool.Config().ConnConfig.Copy()
	cc.RuntimeParams["application_name"] = listenerName
	// A wait that times out only sets a read deadline (no cancel request
	// that could hit the probe after it), so the connection stays usable.
	cc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return false, err
	}
	counters := map[core.CatalogID]uint64{}
	rows, err := conn.Query(ctx, `SELECT catalog, counter FROM catalogs`)
	if err != nil {
		return false, err
	}
	var cat string
	var counter int64
	if _, err := pgx.ForEachRow(rows, []any{&cat, &counter}, func() error {
		counters[core.CatalogID(cat)] = uint64(counter)
		return nil
	}); err != nil {
		return false, err
	}
	for _, c := range core.Catalogs {
		fn(c, counters[c])
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, watchProbe)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return true, ctx.Err()
			}
			if !pgconn.Timeout(err) {
				return true, err
			}
			// Nothing for a while: make sure the connection still answers
			// (a peer that vanished without closing it would not say so).
			pctx, cancel := context.WithTimeout(ctx, watchProbe)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, err
			}
			continue
		}
		c, counter, ok := parseChange(n.Payload)
		if !ok {
			s.log.Warn("postgres change feed: unexpected payload", zap.String("payload", n.Payload))
			continue
		}
		fn(c, counter)
	}
}

// parseChange reads "<catalog>:<counter>".
func parseChange(payload string) (core.CatalogID, uint64, bool) {
	i := strings.LastIndexByte(payload, ':')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(payload[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return core.CatalogID(payload[:i]), n, true
}

// TryLock takes the session advisory lock of name (hashed into
// PostgreSQL's advisory-lock key space, apart from the migration lock) on a
// pooled connection it keeps until unlock, which releases the lock and
// gives the connection back. When the holder dies, PostgreSQL ends its
// session and frees the lock; so it does when the connection breaks, which
// the holder learns from a ping of the connection every lockCheck: Lost is
// closed then.
func (s *Store) TryLock(ctx context.Context, name string) (ports.HeldLock, bool, error) {
	if err := s.enter(ctx); err != nil {
		return ports.HeldLock{}, false, err
	}
	key := "climatesearch run lock: " + name
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return ports.HeldLock{}, false, s.dbErr(ctx, "run lock "+name, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, key).Scan(&ok); err != nil || !ok {
		conn.Release()
		return ports.HeldLock{}, false, s.dbErr(ctx, "run lock "+name, err)
	}
	h := &heldLock{}
	var (
		connMu sync.Mutex // the check and the unlock take turns on the connection
		once   sync.Once
		lost   = make(chan struct{})
		stop   = make(chan struct{})
	)
	every, within := lockCheck, lockCheckTimeout
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			connMu.Lock()
			pctx, cancel := context.WithTimeout(context.Background(), within)
			err := conn.Ping(pctx)
			cancel()
			connMu.Unlock()
			if err != nil {
				select {
				case <-stop: // given back meanwhile
				default:
					s.log.Warn("postgres run lock lost: its connection broke, so PostgreSQL freed it",
						zap.String("lock", name), zap.Error(err))
					close(lost)
				}
				return
			}
		}
	}()
	unlock := func() {
		once.Do(func() {
			close(stop)
			s.locksMu.Lock()
			delete(s.locks, h)
			s.locksMu.Unlock()
			connMu.Lock()
			defer connMu.Unlock()
			uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var released bool
			err := conn.QueryRow(uctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key).Scan(&released)
			if err != nil || !released {
				// Never give the pool a connection that may still hold
				// the lock: close it, which ends the session.
				s.log.Warn("postgres run lock: unlock failed; closing its connection",
					zap.String("lock", name), zap.Bool("released", released), zap.Error(err))
				_ = conn.Hijack().Close(uctx)
				return
			}
			conn.Release()
		})
	}
	h.unlock = unlock
	s.locksMu.Lock()
	if s.locks == nil {
		s.locks = map[*heldLock]struct{}{}
	}
	s.locks[h] = struct{}{}
	s.locksMu.Unlock()
	return ports.HeldLock{Unlock: unlock, Lost: lost}, true, nil
}

// lockCheck is how often a held run lock's connection is pinged, and
// lockCheckTimeout how long a ping may take before the lock counts as lost.
var (
	lockCheck        = time.Second
	lockCheckTimeout = 5 * time.Second
)

// heldLock is a run lock taken and not yet given back; Close gives back
// those still held, since the pool waits for every acquired connection.
type heldLock struct{ unlock func() }

// releaseLocks gives back every run lock still held.
func (s *Store) releaseLocks() {
	s.locksMu.Lock()
	held := make([]*heldLock, 0, len(s.locks))
	for h := range s.locks {
		held = append(held, h)
	}
	s.locksMu.Unlock()
	for _, h := range held {
		h.unlock()
	}
}
