package badgerstore

import (
	"context"
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// The text index is kept on disk across a clean stop (see ports.TextIndex
// Resume and Persist) under a mark the store keeps beside the data it was
// built from. Open takes the mark away: whatever opens the store next (the
// service, the CLI's ingest or restore on a stopped directory) may change
// the data, and only the service's clean stop writes a new mark after its
// last write. A crash, or any other writer, leaves no mark, and the next
// start rebuilds the index.
const indexMarkKey = kvPrefix + "index-mark"

// takeIndexMark reads and deletes the mark; the store keeps it in memory
// for IndexMark.
func (s *Store) takeIndexMark() error {
	return s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(indexMarkKey))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		s.indexMark = string(v)
		return txn.Delete([]byte(indexMarkKey))
	})
}

// IndexMark returns the mark found when the store was opened ("" when none).
func (s *Store) IndexMark(context.Context) (string, error) { return s.indexMark, nil }

// SetIndexMark keeps the mark of an index persisted after the last write.
func (s *Store) SetIndexMark(ctx context.Context, mark string) error {
	return s.PutTTL(ctx, "index-mark", []byte(mark), 0)
}
