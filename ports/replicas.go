package ports

import (
	"context"

	"github.com/climatesearch/climatesearch/core"
)

// --- Several replicas on one shared store (docs/SCALING.md). ---
//
// Each replica keeps its own text and vector indexes in memory; the shared
// store is the truth. A store of one process (badger) implements none of
// these: the core then needs no coordination beyond its own locks.

// ChangeFeed tells a replica what the others wrote. A write announces its
// catalog and new change counter (not the data); the replica then reads the
// resources stamped after the counter it has indexed.
type ChangeFeed interface {
	// Since calls fn, in counter order, for every resource of the catalog
	// written by a change after the counter `after` (withdrawn resources
	// included: they leave the index) and returns the counter of the last
	// change it read (after itself when there was none).
	Since(ctx context.Context, catalog core.CatalogID, after uint64, fn func(StoredResource) error) (uint64, error)
	// Watch calls fn for every announced change until ctx ends, and returns
	// ctx's error. Whenever it (re)connects, and so may have missed
	// announcements, it first calls fn with every catalog's current counter.
	// It reconnects by itself after a lost connection.
	Watch(ctx context.Context, fn func(catalog core.CatalogID, counter uint64)) error
}

// RunLocks keeps one upstream ingest of a catalog at a time across every
// replica.
type RunLocks interface {
	// TryLock takes the named lock when it is free and reports whether it
	// did. A lock is released by itself when its holder dies.
	TryLock(ctx context.Context, name string) (lock HeldLock, ok bool, err error)
}

// HeldLock is a lock TryLock took.
type HeldLock struct {
	// Unlock gives the lock back; later calls do nothing.
	Unlock func()
	// Lost is closed when the lock went while held (the holder's
	// connection to the shared store broke, and the store freed it):
	// another replica may take it now. Nil for a lock that cannot be lost.
	Lost <-chan struct{}
}
