// Package blugeindex implements ports.TextIndex with an in-memory bluge
// index. The store is the source of truth: at boot the caller rebuilds the
// index by upserting every live resource, so nothing is persisted here.
package blugeindex

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.TextIndex = (*Index)(nil)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("blugeindex: index is closed")

// Index is an in-memory full-text index of resources, safe for concurrent use.
//
// Readers: every Search takes a fresh snapshot from the writer. In bluge that
// is a read-locked pointer copy plus a reference count, far cheaper than the
// search itself, and it always sees the latest completed batch. Keeping one
// long-lived reader refreshed after each batch would save only that, and would
// need reference counting of its own so a swap never closes a reader a search
// is still using.
type Index struct {
	// mu guards writer against Close: operations hold it shared, Close
	// exclusively, so a search never runs on a closed writer.
	mu     sync.RWMutex
	writer *bluge.Writer // nil once closed

	// writeMu serialises batches so concurrent Upsert/Remove calls apply in
	// call order (last writer wins) rather than in whatever order bluge
	// introduces their segments.
	writeMu sync.Mutex
}

// New opens an empty in-memory index.
func New() (*Index, error) {
	w, err := bluge.OpenWriter(bluge.InMemoryOnlyConfig())
	if err != nil {
		return nil, fmt.Errorf("blugeindex: open: %w", err)
	}
	return &Index{writer: w}, nil
}

// Close releases the index. It is safe to call more than once.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writer == nil {
		return nil
	}
	err := x.writer.Close()
	x.writer = nil
	return err
}

// Upsert adds or replaces resources in one atomic batch. A withdrawn resource
// is removed instead, so the index holds live resources only whatever the
// caller passes. Each batch costs a segment build and a background merge
// (tens of milliseconds however small), so callers should pass resources in
// bulk: the boot rebuild is a single call.
func (x *Index) Upsert(ctx context.Context, rs []core.Resource) error {
	if len(rs) == 0 {
		return nil
	}
	// Within one batch bluge only obsoletes documents of earlier segments,
	// so two entries for one key would both survive: the last one wins.
	last := make(map[core.Key]int, len(rs))
	for i := range rs {
		k := rs[i].Key()
		if k.ID == "" || k.Catalog == "" {
			return core.Invalidf("blugeindex: resource without id or catalog (%q)", k.String())
		}
		last[k] = i
	}
	batch := bluge.NewBatch()
	for i := range rs {
		r := &rs[i]
		if last[r.Key()] != i {
			continue
		}
		id := bluge.Identifier(r.Key().String())
		if r.Withdrawn {
			batch.Delete(id)
			continue
		}
		batch.Update(id, document(r))
	}
	return x.apply(ctx, batch)
}

// Remove drops resources; unknown keys are ignored.
func (x *Index) Remove(ctx context.Context, keys []core.Key) error {
	if len(keys) == 0 {
		return nil
	}
	batch := bluge.NewBatch()
	for _, k := range keys {
		batch.Delete(bluge.Identifier(k.String()))
	}
	return x.apply(ctx, batch)
}

// apply writes one batch: bluge introduces it atomically, so a concurrent
// search sees all of it or none of it.
func (x *Index) apply(ctx context.Context, batch *index.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.writer == nil {
		return ErrClosed
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if err := x.writer.Batch(batch); err != nil {
		return fmt.Errorf("blugeindex: write batch: %w", err)
	}
	return nil
}

// document maps a resource to its bluge document. The document id is the
// prefixed key, which bluge stores and makes sortable, so a search can return
// keys and break score ties by key.
func document(r *core.Resource) *bluge.Document {
	key := r.Key()
	doc := bluge.NewDocument(key.String())
	doc.AddField(bluge.NewKeywordField(fieldCatalog, string(r.Catalog)))
	for _, t := range idTerms(key) {
		doc.AddField(bluge.NewKeywordField(fieldID, t))
	}
	for _, f := range textFields {
		// CleanText again although the core normalises stored text: it is
		// idempotent and cheap, and a caller that skipped Normalize must not
		// get words split by invisible characters.
		v := core.CleanText(f.value(r))
		if v == "" {
			// No empty fields: BM25 averages field length over the
			// documents that have the field.
			continue
		}
		doc.AddField(bluge.NewTextField(f.name, v).WithAnalyzer(analyzers[f.lang]))
	}
	return doc
}

// Search returns the best matches, best first; equal scores are ordered by
// key so answers are stable. An empty query has no results.
func (x *Index) Search(ctx context.Context, q core.TextQuery) ([]core.Scored, error) {
	text := core.CleanText(q.Text)
	if text == "" {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = core.DefaultLimit
	}

	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.writer == nil {
		return nil, ErrClosed
	}
	reader, err := x.writer.Reader()
	if err != nil {
		return nil, fmt.Errorf("blugeindex: open reader: %w", err)
	}
	defer func() { _ = reader.Close() }()

	req := bluge.NewTopNSearch(limit, buildQuery(text, q.Lang, q.Catalogs)).
		SortBy([]string{"-_score", "_id"})
	it, err := reader.Search(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("blugeindex: search: %w", err)
	}

	out := make([]core.Scored, 0, limit)
	for {
		m, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("blugeindex: search: %w", err)
		}
		if m == nil {
			break
		}
		var key core.Key
		var ok bool
		err = m.VisitStoredFields(func(field string, value []byte) bool {
			if field == "_id" {
				key, ok = parseKey(string(value))
				return false
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("blugeindex: read hit: %w", err)
		}
		if !ok {
			return nil, fmt.Errorf("blugeindex: hit without a valid key (doc %d)", m.Number)
		}
		out = append(out, core.Scored{Key: key, Score: m.Score})
	}
	return out, nil
}

// parseKey splits `catalog:id` at the first colon: catalog ids never hold one,
// resource ids might.
func parseKey(s string) (core.Key, bool) {
	c, id, ok := strings.Cut(s, ":")
	if !ok || c == "" || id == "" {
		return core.Key{}, false
	}
	return core.Key{Catalog: core.CatalogID(c), ID: id}, true
}
