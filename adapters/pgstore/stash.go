package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Stashed files are rows of table stash, each with its expiry (by
// PostgreSQL's clock); expired rows are ignored, and deleted by the next
// Stash.

var _ ports.FileStash = (*Store)(nil)

// Stash keeps f for ttl.
func (s *Store) Stash(ctx context.Context, id string, f core.StashedFile, ttl time.Duration) error {
	at := f.StashedAt
	if at.IsZero() {
		at = time.Now()
	}
	data := f.Data
	if data == nil {
		data = []byte{}
	}
	return s.tx(ctx, "stash", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM stash WHERE expires_at <= now()`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO stash (id, filename, data, stashed_at, expires_at)
			VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 microsecond')
			ON CONFLICT (id) DO UPDATE SET filename = EXCLUDED.filename, data = EXCLUDED.data,
				stashed_at = EXCLUDED.stashed_at, expires_at = EXCLUDED.expires_at`,
			id, f.Filename, data, at.UTC(), ttl.Microseconds()+1)
		return err
	})
}

// Stashed returns a stashed file; found is false when it is absent or expired.
func (s *Store) Stashed(ctx context.Context, id string) (core.StashedFile, bool, error) {
	if err := s.enter(ctx); err != nil {
		return core.StashedFile{}, false, err
	}
	var f core.StashedFile
	err := s.pool.QueryRow(ctx, `SELECT filename, data, stashed_at FROM stash WHERE id = $1 AND expires_at > now()`, id).
		Scan(&f.Filename, &f.Data, &f.StashedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return core.StashedFile{}, false, nil
	}
	if err != nil {
		return core.StashedFile{}, false, s.dbErr(ctx, "stash get", err)
	}
	f.StashedAt = f.StashedAt.UTC()
	return f, true, nil
}
