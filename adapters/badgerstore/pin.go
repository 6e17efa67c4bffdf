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
// begins now, before it writes anything; unpin ends it.
func (s *Store) pinCatalog(catalog core.CatalogID) {
	p := &pin{txn: s.db.NewTransaction(false)}
	s.pinMu.Lock()
	s.pins[catalog] = p
	s.pinMu.Unlock()
}

// unpin ends the read view of catalog, once its change has committed or
// rolled back: reads from now on see the store as it is; the view's
// transaction is discarded once its last reader is done.
func (s *Store) unpin(catalog core.CatalogID) {
	s.pinMu.Lock()
	p := s.pins[catalog]
	delete(s.pins, catalog)
	s.pinMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	if p.users == 0 {
		p.txn.Discard()
	}
}

func (p *pin) acquire() {
	p.mu.Lock()
	p.users++
	p.mu.Unlock()
}

func (p *pin) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users--; p.users == 0 && p.ended {
		p.txn.Discard()
	}
}

// views runs fn with a read transaction per catalog (txnOf): a catalog's
// read view while a chunked change of it runs, else one new read
// transaction that the other catalogs share. Both are taken under pinMu,
// so no change begins or ends between them: a catalog without a view is
// read from a transaction that predates any write of a change begun
// since, or follows the end of one ended since.
func (s *Store) views(fn func(txnOf func(core.CatalogID) *badger.Txn) error) error {
	var pins map[core.CatalogID]*pin // nil while no change runs
	s.pinMu.RLock()
	for c, p := range s.pins { // live: unpin removes a pin before it ends it
		p.acquire()
		if pins == nil {
			pins = make(map[core.CatalogID]*pin, len(s.pins))
		}
		pins[c] = p
	}
	now := s.db.NewTransaction(false)
	s.pinMu.RUnlock()
	defer func() {
		now.Discard()
		for _, p := range pins {
			p.release()
		}
	}()
	return fn(func(c core.CatalogID) *badger.Txn {
		if p := pins[c]; p != nil {
			return p.txn
		}
		return now
	})
}

// view runs fn in the read view of catalog, or in a new read transaction
// when it has none (views).
func (s *Store) view(catalog core.CatalogID, fn func(txn *badger.Txn) error) error {
	return s.views(func(txnOf func(core.CatalogID) *badger.Txn) error { return fn(txnOf(catalog)) })
}
