package ports

import (
	"context"
	"io"
)

// Backup writes a consistent online backup of the whole store (every
// catalog, vector, webhook destination and the event outbox) while the
// service keeps serving; the binary's restore command loads it into an
// empty data directory.
type Backup interface {
	Backup(ctx context.Context, w io.Writer) error
}
