package badgerstore

import (
	"testing"

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
				n, err := s.(*Store).countKeys("", []byte(whHistPrefix))
				if err != nil {
					t.Fatal(err)
				}
				return n
			},
			HistorySlack: histTrimEvery - 1,
		}
	})
}
