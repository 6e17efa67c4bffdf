package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// PutTTL stores value under key. With ttl > 0 the value expires after ttl
// (by PostgreSQL's clock, shared by every replica); ttl <= 0 keeps it
// forever. Writing an expiring value also deletes the rows that have
// expired (unreadable already), so values such as console sessions, one per
// sign-in, do not pile up.
func (s *Store) PutTTL(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if value == nil {
		value = []byte{}
	}
	var micros *int64
	if ttl > 0 {
		m := ttl.Microseconds() + 1 // never early
		micros = &m
	}
	return s.tx(ctx, "kv put "+key, func(tx pgx.Tx) error {
		if ttl > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM kv WHERE expires_at <= now()`); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO kv (key, value, expires_at)
			VALUES ($1, $2, now() + $3::bigint * interval '1 microsecond')
			ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
			key, value, micros)
		return err
	})
}

// GetKV returns the value under key; ok is false when it is absent or
// expired.
func (s *Store) GetKV(ctx context.Context, key string) (value []byte, ok bool, err error) {
	if err := s.enter(ctx); err != nil {
		return nil, false, err
	}
	err = s.pool.QueryRow(ctx, `SELECT value FROM kv WHERE key = $1 AND (expires_at IS NULL OR expires_at > now())`, key).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.dbErr(ctx, "kv get "+key, err)
	}
	return value, true, nil
}

// DeleteKV removes the value under key; an absent key is no error.
func (s *Store) DeleteKV(ctx context.Context, key string) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `DELETE FROM kv WHERE key = $1`, key)
	if err != nil {
		return s.dbErr(ctx, "kv delete "+key, err)
	}
	return nil
}

// TakeKV returns the value under key and deletes its row in one statement
// (DELETE … RETURNING): of concurrent takes, on any replica, the one whose
// delete wins the row lock gets the value, the others find no row. An
// expired value is not taken; it is left to the purge of PutTTL.
func (s *Store) TakeKV(ctx context.Context, key string) (value []byte, ok bool, err error) {
	if err := s.enter(ctx); err != nil {
		return nil, false, err
	}
	err = s.pool.QueryRow(ctx, `DELETE FROM kv WHERE key = $1 AND (expires_at IS NULL OR expires_at > now()) RETURNING value`, key).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.dbErr(ctx, "kv take "+key, err)
	}
	return value, true, nil
}
