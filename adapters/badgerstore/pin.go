package badgerstore

import (
	"sync"

	"github.com/dgraph-io/badger/v4"

	"github.com/climatesearch/climatesearch/core"
)

// A chunked change (chunked.go) writes its records in place, chunk after
// chunk, long before its commit point. While it runs, the reads of its
// catalog go to a read view taken when it began (a read-only badger
// transaction, which sees the store as of its start whatever is written
// after), so they see the catalog as it was until the change ends: the
// ingest can write a large file beside readers and hold them back only
// for its commit. Reads of other catalogs, and every other key (metadata,
// vectors, webhooks), read the store as it is.

// pin is the read view of a catalog during a chunked change. Readers
// share its transaction, which a read-only badger transaction allows: it
// keeps no state per read (only update transactions track their reads)
// and counts its iterators atomically (TestReadsDuringAChunkedChange runs
// readers on one under -race). The last reader out after the change ended
// discards it; an open iterator would make Discard panic.
type pin struct {
	txn *badger.Txn

	mu    sync.Mutex
	users int
	ended bool
}

// pinCatalog takes the read view of catalog for a chunked change that
// begins now; unpin ends it.
func (s *Store) pinCatalog(catalog core.CatalogID) {
	p := &pin{txn: s.db.NewTransaction(false)}
	s.pinMu.Lock()
	s.pins[catalog] = p
	s.pinMu.Unlock()
}

// unpin ends the read view of catalog: reads from now on see the store as
// it is; the view's transaction is discarded once its last reader is done.
func (s *Store) unpin(catalog core.CatalogID) {
	s.pinMu.Lock()
	p := s.pins[catalog]
	delete(s.pins, catalog)
	s.pinMu.Unlock()
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	if p.users == 0 {
		p.txn.Discard()
	}
}

// pinned returns the read view of catalog, acquired (release it), or nil
// when no chunked change of catalog runs.
func (s *Store) pinned(catalog core.CatalogID) *pin {
	s.pinMu.RLock()
	p := s.pins[catalog]
	s.pinMu.RUnlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return nil // ended meanwhile: the store as it is
	}
	p.users++
	return p
}

func (p *pin) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users--; p.users == 0 && p.ended {
		p.txn.Discard()
	}
}

// view runs fn in the read view of catalog, or in a new read transaction
// when it has none.
func (s *Store) view(catalog core.CatalogID, fn func(txn *badger.Txn) error) error {
	if p := s.pinned(catalog); p != nil {
		defer p.release()
		return fn(p.txn)
	}
	return s.db.View(fn)
}

// views runs fn with a read transaction per catalog (txnOf): a catalog's
// read view while a chunked change of it runs, else one new read
// transaction that the other catalogs share. Each catalog's is chosen
// once per call.
func (s *Store) views(fn func(txnOf func(core.CatalogID) *badger.Txn) error) error {
	return s.db.View(func(now *badger.Txn) error {
		var held map[core.CatalogID]*pin // nil entries: no view, now
		defer func() {
			for _, p := range held {
				if p != nil {
					p.release()
				}
			}
		}()
		return fn(func(c core.CatalogID) *badger.Txn {
			p, chosen := held[c]
			if !chosen {
				p = s.pinned(c)
				if held == nil {
					held = map[core.CatalogID]*pin{}
				}
				held[c] = p
			}
			if p != nil {
				return p.txn
			}
			return now
		})
	})
}
