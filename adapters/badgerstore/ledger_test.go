package badgerstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Entries expire after the challenge's expiry plus the margin, not before.
func TestLedgerExpiry(t *testing.T) {
	ctx := context.Background()
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	until := time.Now().Add(5 * time.Minute)
	if _, err := st.Spend(ctx, "ch1", "0xaaa", until); err != nil {
		t.Fatal(err)
	}
	err = st.db.View(func(txn *badger.Txn) error {
		for _, k := range []string{payChallengePrefix + "ch1", payRefPrefix + "0xaaa"} {
			item, err := txn.Get([]byte(k))
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			exp := time.Unix(int64(item.ExpiresAt()), 0)
			if exp.Before(until.Add(ledgerMargin)) || exp.After(until.Add(ledgerMargin+2*time.Second)) {
				t.Errorf("%s expires at %v, want %v", k, exp, until.Add(ledgerMargin))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
