package ports

import (
	"context"
	"time"
)

// DataStamp tells which state of the stored data an answer is computed
// from, in a form that survives restarts: the HTTP validators (ETag,
// Last-Modified) of the reads are derived from it, never from the bodies.
type DataStamp interface {
	Generations
	// Stamp returns a token that changes with every write that becomes
	// visible and is the same after a restart over the same data, and the
	// time of the latest write (zero before any).
	Stamp(ctx context.Context) (token string, modified time.Time, err error)
}
