package badgerstore

import (
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/climatesearch/climatesearch/test/storetest"
)

// TestStoreContract runs the store contract shared with adapters/pgstore.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		dir := t.TempDir()
		return storetest.Backend{
			Open: func(t *testing.T) storetest.Store { return openT(t, dir) },
			StoredHistory: func(t *testing.T, s storetest.Store) int {
				t.Helper()
				n := 0
				err := s.(*Store).db.View(func(txn *badger.Txn) error {
					opts := badger.DefaultIteratorOptions
					opts.Prefix = []byte(whHistPrefix)
					opts.PrefetchValues = false
					it := txn.NewIterator(opts)
					defer it.Close()
					for it.Rewind(); it.Valid(); it.Next() {
						n++
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return n
			},
			HistorySlack: histTrimEvery - 1,
		}
	})
}
