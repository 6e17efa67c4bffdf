package badgerstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func TestLedgerSpendsOnce(t *testing.T) {
	ctx := context.Background()
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	until := time.Now().Add(5 * time.Minute)
	for _, c := range []struct {
		id, ref string
		fresh   bool
	}{
		{"ch1", "0xaaa", true},
		{"ch1", "0xaaa", false}, // the same credential again
		{"ch2", "0xaaa", false}, // the same payment for another challenge
		{"ch1", "0xbbb", false}, // the same challenge paid again
		{"ch3", "0xbbb", true},  // nothing recorded by the refused spends
		{"ch4", "", true},       // no reference: the challenge alone
		{"ch4", "0xccc", false},
	} {
		fresh, err := st.Spend(ctx, c.id, c.ref, until)
		if err != nil || fresh != c.fresh {
			t.Errorf("Spend(%s, %s) = %v, %v; want %v", c.id, c.ref, fresh, err, c.fresh)
		}
	}
	if fresh, err := st.Spend(ctx, "ch5", "0xccc", until); err != nil || !fresh {
		t.Errorf("0xccc was recorded by a refused spend: %v %v", fresh, err)
	}
	if _, err := st.Spend(ctx, "", "0xddd", until); err == nil {
		t.Error("empty challenge id accepted")
	}
}

// A restart does not reopen a replay: the ledger is on disk.
func TestLedgerSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(5 * time.Minute)
	if fresh, err := st.Spend(ctx, "ch1", "0xaaa", until); err != nil || !fresh {
		t.Fatalf("first spend: %v %v", fresh, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Spend(ctx, "ch9", "0x999", until); err == nil {
		t.Error("spend on a closed store")
	}
	if st, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range [][2]string{{"ch1", "0xnew"}, {"ch2", "0xaaa"}} {
		if fresh, err := st.Spend(ctx, c[0], c[1], until); err != nil || fresh {
			t.Errorf("after reopen Spend(%s, %s) = %v, %v; want not fresh", c[0], c[1], fresh, err)
		}
	}
}

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
	// A challenge that already expired is still remembered for the margin.
	if fresh, _ := st.Spend(ctx, "old", "0xold", time.Now().Add(-time.Hour)); !fresh {
		t.Fatal("old spend not fresh")
	}
	if fresh, _ := st.Spend(ctx, "old", "0xold2", time.Now().Add(-time.Hour)); fresh {
		t.Error("an expired challenge was forgotten at once")
	}
}

// Concurrent spends of one challenge: exactly one is fresh.
func TestLedgerConcurrentSpends(t *testing.T) {
	ctx := context.Background()
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	until := time.Now().Add(5 * time.Minute)
	var fresh atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := st.Spend(ctx, "same", fmt.Sprintf("0x%d", i), until)
			if err != nil {
				t.Error(err)
			}
			if ok {
				fresh.Add(1)
			}
		}()
	}
	wg.Wait()
	if fresh.Load() != 1 {
		t.Errorf("%d fresh spends of one challenge, want 1", fresh.Load())
	}
}
