// Package blugeindex implements ports.TextIndex with an in-memory bluge
// index. The store is the source of truth: at boot the caller rebuilds the
// index by upserting every live resource, so nothing is persisted here.
package blugeindex

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blugelabs/bluge"
	blugesearch "github.com/blugelabs/bluge/search"

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
	// introduces their segments. It also guards docs.
	writeMu sync.Mutex
	// docs are the live resources: the lexicon (compound dictionaries,
	// vocabulary) is rebuilt from all of them on every write.
	docs map[core.Key]*core.Resource
	// lex is the lexicon of the latest write, swapped right after bluge
	// applied the batch. A search that starts in that instant pairs the
	// new documents with the previous lexicon: it may miss a term that only
	// the new documents hold, or rank with the previous compound parts; it
	// never fails. A write is complete, lexicon included, when Upsert or
	// Remove returns.
	lex atomic.Pointer[lexicon]
}

// New opens an empty in-memory index.
func New() (*Index, error) {
	cfg := bluge.InMemoryOnlyConfig()
	// Fill the config's own map: the config's norm function holds it.
	maps.Copy(cfg.PerFieldSimilarity, similarities())
	w, err := bluge.OpenWriter(cfg)
	if err != nil {
		return nil, fmt.Errorf("blugeindex: open: %w", err)
	}
	x := &Index{writer: w, docs: map[core.Key]*core.Resource{}}
	x.lex.Store(buildLexicon(x.docs, nil))
	return x, nil
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
// caller passes. Each write rebuilds the lexicon from every live resource:
// the first, of a whole catalog, analyses everything (about a tenth of a
// second for the national catalog); later ones reuse the analysis of the
// resources they leave alone, unless the new compound dictionary splits one
// of their words differently, and re-index only the resources whose analysis
// changed besides the given ones. Each batch also costs a segment build and
// a background merge, so callers should pass resources in bulk: the boot
// rebuild is a single call.
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
	return x.write(ctx, func(docs map[core.Key]*core.Resource) []core.Key {
		touched := make([]core.Key, 0, len(last))
		for k, i := range last {
			if rs[i].Withdrawn {
				delete(docs, k)
			} else {
				r := rs[i].Clone()
				docs[k] = &r
			}
			touched = append(touched, k)
		}
		return touched
	})
}

// Remove drops resources; unknown keys are ignored.
func (x *Index) Remove(ctx context.Context, keys []core.Key) error {
	if len(keys) == 0 {
		return nil
	}
	return x.write(ctx, func(docs map[core.Key]*core.Resource) []core.Key {
		for _, k := range keys {
			delete(docs, k)
		}
		return keys
	})
}

// write applies change to a copy of the live resources, rebuilds the
// lexicon, and writes one batch: the touched keys (updated, or deleted when
// no longer live) and every other resource whose analysis changed. bluge
// introduces the batch atomically, so a concurrent search sees all of it or
// none of it.
func (x *Index) write(ctx context.Context, change func(docs map[core.Key]*core.Resource) []core.Key) error {
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

	docs := maps.Clone(x.docs)
	touched := change(docs)
	old := x.lex.Load()
	lex := buildLexicon(docs, old)

	batch := bluge.NewBatch()
	done := make(map[core.Key]bool, len(touched))
	for _, k := range touched {
		done[k] = true
		id := bluge.Identifier(k.String())
		if d, live := lex.docs[k]; live {
			batch.Update(id, document(k, d))
		} else {
			batch.Delete(id)
		}
	}
	for k, d := range lex.docs {
		if done[k] {
			continue
		}
		if prev, ok := old.docs[k]; !ok || prev.hash != d.hash {
			batch.Update(bluge.Identifier(k.String()), document(k, d))
		}
	}
	if err := x.writer.Batch(batch); err != nil {
		return fmt.Errorf("blugeindex: write batch: %w", err)
	}
	x.docs = docs
	x.lex.Store(lex)
	return nil
}

// document maps an analysed resource to its bluge document. The document id
// is the prefixed key, which bluge stores, so a search can return keys.
func document(key core.Key, d *docAnalysis) *bluge.Document {
	doc := bluge.NewDocument(key.String())
	doc.AddField(bluge.NewKeywordField(fieldCatalog, string(key.Catalog)))
	for _, t := range idTerms(key) {
		doc.AddField(bluge.NewKeywordField(fieldID, t))
	}
	for i, f := range textFields {
		if len(d.fields[i]) == 0 {
			// No empty fields: BM25 averages field length over the
			// documents that have the field.
			continue
		}
		doc.AddField(bluge.NewTextField(f.name, "").WithAnalyzer(fixedTokens(d.fields[i])))
	}
	return doc
}

// Search returns the best matches, best first; equal scores are ordered by
// key so answers are stable. An empty query has no results.
//
// The query is analysed in every language (analyzeQuery), the best
// candidates are found by weighted BM25 over the fields (buildQuery), and
// rescored by how much of their names the query covers (rerank). Scores are
// comparable within one answer only.
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

	lex := x.lex.Load()
	tq := analyzeQuery(text, lex)
	query := buildQuery(tq, lex, text, q.Lang, q.Catalogs)
	// The candidates are the depth best by BM25, rescored by name coverage.
	// bluge orders equal scores by its internal document number, which
	// merges may change. So when a hit after the candidates scores as the
	// last of them, and the rescoring could lift a document of that score
	// into the answer, the search is repeated deeper until the candidates
	// hold every document of that score: the answer never depends on the
	// segment layout. (Ordering by key in bluge instead would load the key
	// of every matching document, on every search.)
	out, err := candidates(ctx, reader, query, max(limit, rerankDepth))
	if err != nil {
		return nil, err
	}
	rerank(out, tq, lex)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// candidates returns the depth best hits by BM25 with their keys, and every
// further hit that scores as the last of them. bluge orders equal scores by
// its internal document number, which merges may change; taking the whole
// group of equal scores at the cut keeps the candidates, and so the answer,
// independent of the segment layout. (Ordering by key in bluge instead would
// load the key of every matching document, on every search.) The search
// fetches room for such a group; a larger group than that fetches again.
func candidates(ctx context.Context, reader *bluge.Reader, query bluge.Query, depth int) ([]core.Scored, error) {
	for fetch := 2 * depth; ; fetch *= 4 {
		it, err := reader.Search(ctx, bluge.NewTopNSearch(fetch, query))
		if err != nil {
			return nil, fmt.Errorf("blugeindex: search: %w", err)
		}
		out := make([]core.Scored, 0, depth)
		for n := 0; ; n++ {
			m, err := it.Next()
			if err != nil {
				return nil, fmt.Errorf("blugeindex: search: %w", err)
			}
			if m == nil {
				if n == fetch && out[len(out)-1].Score == out[depth-1].Score {
					break // the group of equal scores may go on: fetch more
				}
				return out, nil
			}
			if n >= depth && m.Score != out[depth-1].Score {
				return out, nil
			}
			key, err := hitKey(m)
			if err != nil {
				return nil, err
			}
			out = append(out, core.Scored{Key: key, Score: m.Score})
		}
	}
}

// hitKey reads the key of a hit from its stored _id.
func hitKey(m *blugesearch.DocumentMatch) (core.Key, error) {
	var key core.Key
	var ok bool
	err := m.VisitStoredFields(func(field string, value []byte) bool {
		if field == "_id" {
			key, ok = parseKey(string(value))
			return false
		}
		return true
	})
	if err != nil {
		return core.Key{}, fmt.Errorf("blugeindex: read hit: %w", err)
	}
	if !ok {
		return core.Key{}, fmt.Errorf("blugeindex: hit without a valid key (doc %d)", m.Number)
	}
	return key, nil
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
