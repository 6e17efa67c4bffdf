package ports

import (
	"context"
	"time"
)

// KV keeps small values with an expiry in the store, so every replica over
// a shared store (docs/SCALING.md) sees what any of them wrote, and a
// restart keeps them. The operator console keeps its sign-in sessions here,
// under the SHA-256 of the session id (never the id itself), and its
// flashes (the outcome of a form post, shown by the page it redirects to,
// whichever replica serves that page).
type KV interface {
	// PutTTL stores value under key, replacing what was there. With
	// ttl > 0 the value expires after at least ttl (a store may keep it up
	// to a second longer); ttl <= 0 keeps it forever.
	PutTTL(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// GetKV returns the value under key; ok is false when it is absent or
	// expired.
	GetKV(ctx context.Context, key string) (value []byte, ok bool, err error)
	// DeleteKV removes the value under key; an absent key is no error.
	DeleteKV(ctx context.Context, key string) error
	// TakeKV returns the value under key and removes it in one step: of
	// several callers taking the same key at once, over one store or
	// several replicas sharing it, one gets ok with the value and the
	// others ok false. An expired value is not taken (ok false).
	TakeKV(ctx context.Context, key string) (value []byte, ok bool, err error)
}
