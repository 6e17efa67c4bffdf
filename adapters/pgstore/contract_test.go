package pgstore

import (
	"context"
	"os"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/climatesearch/climatesearch/test/pgtest"
	"github.com/climatesearch/climatesearch/test/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openT opens a store on the database at url, closed when the test ends.
func openT(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestStoreContract runs the store contract shared with adapters/badgerstore,
// each test on a fresh database of the shared cluster.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		url := pgtest.Shared(t).NewDB(t)
		return storetest.Backend{
			Open: func(t *testing.T) storetest.Store { return openT(t, url) },
			StoredHistory: func(t *testing.T, s storetest.Store) int {
				t.Helper()
				var n int
				if err := s.(*Store).pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_history`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
			HistorySlack: histTrimEvery - 1,
		}
	})
}
