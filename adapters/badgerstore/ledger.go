package badgerstore

import (
	"context"
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// The payment ledger: challenge ids and payment references accepted once.
//
//	pay/ch/<challenge id>  -> empty, expiring after the challenge's expiry plus ledgerMargin
//	pay/ref/<reference>    -> empty, the same expiry
//
// Both are written in one transaction after both were read absent;
// Badger's conflict detection makes two concurrent Spends of the same id
// or reference serialise, so exactly one of them is fresh. Writes are
// synced, so a restart does not reopen a replay.

var _ ports.PaymentLedger = (*Store)(nil)

const (
	payChallengePrefix = "pay/ch/"
	payRefPrefix       = "pay/ref/"
	// ledgerMargin keeps spent entries past their challenge's expiry, for
	// clock skew between this process and the one that issued the
	// challenge (a credential is refused once its challenge expired, so a
	// longer memory is not needed).
	ledgerMargin = time.Hour
	// ledgerRetries bounds the retries of a transaction that conflicted
	// with a concurrent Spend.
	ledgerRetries = 8
)

// Spend records challengeID and reference (when not empty) as used until
// until plus a margin; fresh is false when either was used before, and
// nothing is recorded then.
func (s *Store) Spend(ctx context.Context, challengeID, reference string, until time.Time) (bool, error) {
	if challengeID == "" {
		return false, core.Invalidf("payment ledger: empty challenge id")
	}
	if err := s.enterWrite(ctx); err != nil {
		return false, err
	}
	defer s.leaveWrite()
	keys := [][]byte{[]byte(payChallengePrefix + challengeID)}
	if reference != "" {
		keys = append(keys, []byte(payRefPrefix+reference))
	}
	expires := until.Add(ledgerMargin)
	if now := time.Now(); expires.Before(now.Add(ledgerMargin)) {
		expires = now.Add(ledgerMargin)
	}
	at := uint64(expires.Unix()) + 1 // Badger keeps whole seconds; never early
	for range ledgerRetries {
		fresh := true
		err := s.db.Update(func(txn *badger.Txn) error {
			for _, k := range keys {
				_, err := txn.Get(k)
				switch {
				case err == nil:
					fresh = false
					return nil
				case !errors.Is(err, badger.ErrKeyNotFound):
					return err
				}
			}
			for _, k := range keys {
				e := badger.NewEntry(k, nil)
				e.ExpiresAt = at
				if err := txn.SetEntry(e); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, badger.ErrConflict) {
			continue // a concurrent Spend touched the keys: read again
		}
		if err != nil {
			return false, s.writeErr("payment ledger spend", err)
		}
		return fresh, nil
	}
	return false, core.Unavailablef(badger.ErrConflict, "store: payment ledger: too many concurrent spends of one challenge")
}
