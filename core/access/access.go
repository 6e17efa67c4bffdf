// Package access checks customer API keys for the hosted build: Keys
// implements the driver port ports.Keys over a ports.KeyVerifier (a key
// service such as Unkey, or a key file) and keeps the verifier's verdicts
// in a small cache, so a busy customer costs one key-service call a minute,
// not one per request.
//
//   - A positive verdict is kept for PositiveTTL (a minute by default), a
//     negative one for NegativeTTL (a few seconds); a RATE_LIMITED or
//     USAGE_EXCEEDED verdict that says when to come back is kept no longer
//     than that, and its RetryAfter counts down while it is cached.
//   - Entries are keyed by the SHA-256 of the key: the key itself is never
//     kept.
//   - The cache holds at most MaxEntries verdicts, the least recently used
//     going first.
//   - Concurrent checks of the same key share one verifier call.
//   - Errors (the key service could not answer) are never cached: the next
//     check asks again.
//
// A consequence to know: a key service that counts usage or applies rate
// limits at verification (Unkey does) sees one verification per cache miss,
// not one per request.
package access

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Defaults of Config.
const (
	DefaultPositiveTTL = time.Minute
	DefaultNegativeTTL = 5 * time.Second
	DefaultMaxEntries  = 10_000
	// DefaultCallTimeout bounds one shared verifier call; the verifier's
	// own timeout (2 s for Unkey) is normally shorter.
	DefaultCallTimeout = 10 * time.Second
)

// Config tunes the verdict cache. The zero value is the defaults.
type Config struct {
	// PositiveTTL is how long a valid verdict is reused; 0 means
	// DefaultPositiveTTL, a negative value disables caching valid verdicts.
	PositiveTTL time.Duration
	// NegativeTTL is how long an invalid verdict is reused; 0 means
	// DefaultNegativeTTL, a negative value disables caching invalid verdicts.
	NegativeTTL time.Duration
	// MaxEntries bounds the number of cached verdicts; 0 means
	// DefaultMaxEntries.
	MaxEntries int
	// CallTimeout bounds one verifier call shared by concurrent checks; 0
	// means DefaultCallTimeout.
	CallTimeout time.Duration
	// Now is the clock; nil means time.Now. Tests inject one.
	Now func() time.Time
}

// Keys implements ports.Keys. Safe for concurrent use.
type Keys struct {
	verifier ports.KeyVerifier
	cfg      Config

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*list.Element // of *entry
	lru     *list.List                          // front: most recently used
	flights map[[sha256.Size]byte]*flight
}

var _ ports.Keys = (*Keys)(nil)

type entry struct {
	id      [sha256.Size]byte
	verdict core.KeyVerdict
	expires time.Time
	// retryAt is when a cached RetryAfter runs out (zero when none).
	retryAt time.Time
}

// flight is one verifier call that concurrent checks of a key wait for.
type flight struct {
	done    chan struct{}
	verdict core.KeyVerdict
	err     error
	// waiters counts the checks waiting for this call (tests read it).
	waiters int
}

// New returns Keys asking v on a cache miss.
func New(v ports.KeyVerifier, cfg Config) *Keys {
	if cfg.PositiveTTL == 0 {
		cfg.PositiveTTL = DefaultPositiveTTL
	}
	if cfg.NegativeTTL == 0 {
		cfg.NegativeTTL = DefaultNegativeTTL
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Keys{
		verifier: v,
		cfg:      cfg,
		entries:  map[[sha256.Size]byte]*list.Element{},
		lru:      list.New(),
		flights:  map[[sha256.Size]byte]*flight{},
	}
}

// Check implements ports.Keys. An empty key is NOT_FOUND without asking the
// verifier. An error means the verifier could not answer (or ctx ended
// while waiting for it); it is not cached.
func (k *Keys) Check(ctx context.Context, key string) (core.KeyVerdict, error) {
	if key == "" {
		return core.KeyVerdict{Valid: false, Code: core.KeyNotFound}, nil
	}
	id := keyID(key)

	k.mu.Lock()
	if v, ok := k.cachedLocked(id); ok {
		k.mu.Unlock()
		return v, nil
	}
	f, joined := k.flights[id]
	if !joined {
		f = &flight{done: make(chan struct{})}
		k.flights[id] = f
		// The call runs on its own so that a caller giving up (its ctx
		// ends) does not fail the others waiting for the same key; it
		// keeps ctx's values, not its cancellation, and has its own bound.
		go k.run(context.WithoutCancel(ctx), id, key, f)
	}
	f.waiters++
	k.mu.Unlock()

	select {
	case <-f.done:
		return f.verdict, f.err
	case <-ctx.Done():
		return core.KeyVerdict{}, core.Unavailablef(ctx.Err(), "checking the API key")
	}
}

// keyID is the cache's name of a key: its SHA-256.
func keyID(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

func (k *Keys) run(ctx context.Context, id [sha256.Size]byte, key string, f *flight) {
	ctx, cancel := context.WithTimeout(ctx, k.cfg.CallTimeout)
	defer cancel()
	verdict, err := k.verifier.Verify(ctx, key)

	k.mu.Lock()
	if err == nil {
		k.storeLocked(id, verdict)
	}
	delete(k.flights, id)
	k.mu.Unlock()

	f.verdict, f.err = verdict, err
	close(f.done)
}

// cachedLocked returns the live cached verdict of id, its RetryAfter
// counted down to now.
func (k *Keys) cachedLocked(id [sha256.Size]byte) (core.KeyVerdict, bool) {
	el, ok := k.entries[id]
	if !ok {
		return core.KeyVerdict{}, false
	}
	e := el.Value.(*entry)
	now := k.cfg.Now()
	if !now.Before(e.expires) {
		k.lru.Remove(el)
		delete(k.entries, id)
		return core.KeyVerdict{}, false
	}
	k.lru.MoveToFront(el)
	v := e.verdict
	if !e.retryAt.IsZero() {
		v.RetryAfter = e.retryAt.Sub(now)
	}
	return v, true
}

func (k *Keys) storeLocked(id [sha256.Size]byte, v core.KeyVerdict) {
	now := k.cfg.Now()
	ttl := k.cfg.NegativeTTL
	if v.Valid {
		ttl = k.cfg.PositiveTTL
	}
	e := &entry{id: id, verdict: v}
	if v.RetryAfter > 0 {
		e.retryAt = now.Add(v.RetryAfter)
		ttl = min(ttl, v.RetryAfter)
	}
	if ttl <= 0 {
		return
	}
	e.expires = now.Add(ttl)
	if el, ok := k.entries[id]; ok {
		el.Value = e
		k.lru.MoveToFront(el)
		return
	}
	for k.lru.Len() >= k.cfg.MaxEntries {
		oldest := k.lru.Back()
		k.lru.Remove(oldest)
		delete(k.entries, oldest.Value.(*entry).id)
	}
	k.entries[id] = k.lru.PushFront(e)
}

// Len is the number of cached verdicts (expired ones included until they
// are looked up or pushed out).
func (k *Keys) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lru.Len()
}
