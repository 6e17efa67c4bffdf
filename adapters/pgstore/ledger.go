package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// The payment ledger: rows of payments_spent, ('ch', challenge id) and
// ('ref', payment reference), each kept until the challenge's expiry plus
// ledgerMargin. Spend inserts both in one transaction; an insert that
// meets a row still valid inserts nothing, and the transaction is rolled
// back. The primary key makes two concurrent Spends of one id or
// reference, on any replicas, serialise: the second insert waits for the
// first transaction and then sees its row, so exactly one is fresh.

var _ ports.PaymentLedger = (*Store)(nil)

// ledgerMargin keeps spent entries past their challenge's expiry, for
// clock skew between replicas (a credential is refused once its challenge
// expired, so a longer memory is not needed).
const ledgerMargin = time.Hour

// errSpent rolls back a Spend that met a recorded id or reference.
var errSpent = errors.New("spent")

// Spend records challengeID and reference (when not empty) as used until
// until plus a margin; fresh is false when either was used before, and
// nothing is recorded then.
func (s *Store) Spend(ctx context.Context, challengeID, reference string, until time.Time) (bool, error) {
	if challengeID == "" {
		return false, core.Invalidf("payment ledger: empty challenge id")
	}
	expires := until.Add(ledgerMargin)
	if now := time.Now(); expires.Before(now.Add(ledgerMargin)) {
		expires = now.Add(ledgerMargin)
	}
	kinds, keys := []string{"ch"}, []string{challengeID}
	if reference != "" {
		kinds, keys = append(kinds, "ref"), append(keys, reference)
	}
	err := s.tx(ctx, "payment ledger spend", func(tx pgx.Tx) error {
		for i := range keys {
			tag, err := tx.Exec(ctx, `
				INSERT INTO payments_spent (kind, key, expires_at) VALUES ($1, $2, $3)
				ON CONFLICT (kind, key) DO UPDATE SET expires_at = EXCLUDED.expires_at
				WHERE payments_spent.expires_at <= now()`, kinds[i], keys[i], expires)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return errSpent
			}
		}
		return nil
	})
	if errors.Is(err, errSpent) {
		return false, nil
	}
	if err == nil && s.spends.Add(1)%ledgerSweepEvery == 1 {
		// Now and then, forget what expired (the first Spend of a process
		// included); a failure here changes nothing of this spend.
		if _, err := s.pool.Exec(ctx, `DELETE FROM payments_spent WHERE expires_at <= now()`); err != nil {
			s.log.Warn("payment ledger: sweep of expired entries", zap.Error(err))
		}
	}
	return err == nil, err
}

// ledgerSweepEvery is how often Spend deletes expired entries.
const ledgerSweepEvery = 1024
