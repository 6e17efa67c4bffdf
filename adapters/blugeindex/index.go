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

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	"github.com/blugelabs/bluge/numeric"
	blugesearch "github.com/blugelabs/bluge/search"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.TextIndex = (*Index)(nil)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("blugeindex: index is closed")

// Index is an in-memory full-text index of resources, safe for concurrent use.
//
// A write is prepared, then committed. Preparing (the analysis of the new
// resources, and of the resources whose words a new dictionary splits
// differently) runs beside searches; the commit, which introduces the bluge
// batch and updates the lexicon, holds the index exclusively, so a search
// always pairs a bluge snapshot with the lexicon of the same write and sees
// a write all or nothing. Every Search takes a fresh snapshot from the
// writer: in bluge that is a read-locked pointer copy plus a reference
// count, far cheaper than the search itself.
type Index struct {
	// mu guards the writer and the lexicon: searches hold it shared,
	// commits and Close exclusively.
	mu     sync.RWMutex
	writer *bluge.Writer // nil once closed
	lex    *lexicon

	// writeMu serialises changes from Prepare to Commit or Discard, so
	// each is prepared against the lexicon it will be applied to and
	// changes apply in call order (last writer wins).
	writeMu sync.Mutex
}

// New opens an empty in-memory index.
func New() (*Index, error) {
	x := &Index{lex: newLexicon()}
	cfg := bluge.InMemoryOnlyConfig()
	// Fill the config's own map: the config's norm function holds it.
	maps.Copy(cfg.PerFieldSimilarity, similarities(func() *lexicon { return x.lex }))
	w, err := bluge.OpenWriter(cfg)
	if err != nil {
		return nil, fmt.Errorf("blugeindex: open: %w", err)
	}
	x.writer = w
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

// Upsert adds or replaces resources in one atomic change. A withdrawn
// resource is removed instead, so the index holds live resources only
// whatever the caller passes. Each change costs a segment build and a
// background merge besides its analysis, so callers should pass resources
// in bulk.
func (x *Index) Upsert(ctx context.Context, rs []core.Resource) error {
	return x.apply(ctx, rs, nil)
}

// Remove drops resources; unknown keys are ignored.
func (x *Index) Remove(ctx context.Context, keys []core.Key) error {
	return x.apply(ctx, nil, keys)
}

func (x *Index) apply(ctx context.Context, upsert []core.Resource, remove []core.Key) error {
	ch, err := x.Prepare(ctx, upsert, remove)
	if err != nil {
		return err
	}
	return ch.Commit()
}

// Prepare analyses a change without making it visible; see ports.TextIndex.
// The next Prepare waits until the change is committed or discarded.
func (x *Index) Prepare(ctx context.Context, upsert []core.Resource, remove []core.Key) (ports.IndexChange, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	target := make(map[core.Key]*core.Resource, len(upsert)+len(remove))
	for i := range upsert {
		k := upsert[i].Key()
		if k.ID == "" || k.Catalog == "" {
			return nil, core.Invalidf("blugeindex: resource without id or catalog (%q)", k.String())
		}
		if upsert[i].Withdrawn {
			target[k] = nil
		} else {
			r := upsert[i].Clone()
			target[k] = &r // the last entry of a key wins
		}
	}
	for _, k := range remove {
		target[k] = nil
	}
	x.writeMu.Lock()
	if x.closed() {
		x.writeMu.Unlock()
		return nil, ErrClosed
	}
	// Only writers change the lexicon, and they hold writeMu: reading it
	// here needs no other lock.
	dl := x.lex.prepare(target)
	batch := bluge.NewBatch()
	for k, d := range dl.next {
		id := bluge.Identifier(k.String())
		switch _, touched := target[k]; {
		case d == nil:
			batch.Delete(id)
		case touched || x.lex.docs[k].hash != d.hash:
			batch.Update(id, document(k, d))
		}
	}
	return &change{x: x, dl: dl, batch: batch}, nil
}

func (x *Index) closed() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.writer == nil
}

// change is a prepared write; see ports.IndexChange.
type change struct {
	x     *Index
	dl    *delta
	batch *index.Batch
	done  bool
}

// Commit introduces the batch and updates the lexicon, with searches held
// back meanwhile.
func (c *change) Commit() error {
	if c.done {
		return errors.New("blugeindex: change already committed or discarded")
	}
	c.done = true
	x := c.x
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writer == nil {
		return ErrClosed
	}
	if err := x.writer.Batch(c.batch); err != nil {
		return fmt.Errorf("blugeindex: write batch: %w", err)
	}
	x.lex.apply(c.dl)
	return nil
}

// Discard drops the change.
func (c *change) Discard() {
	if !c.done {
		c.done = true
		c.x.writeMu.Unlock()
	}
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

	lex := x.lex
	tq := analyzeQuery(text, lex)
	query := buildQuery(tq, lex, text, q.Lang, q.Catalogs)
	// The candidates are the depth best by BM25, rescored by name coverage;
	// equal scores at the cut never depend on the segment layout (see
	// candidates).
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
// independent of the segment layout. The search fetches room for such a
// group. A larger group (thousands of resources named alike) is cut by key
// instead (candidatesByKey): ordering by key in bluge loads the key of every
// matching document, which doubles the cost of an ordinary search of the
// real catalog, but costs a sixth of reading and rescoring the whole group
// (20,000 equal names: 25 against 160 ms).
func candidates(ctx context.Context, reader *bluge.Reader, query bluge.Query, depth int) ([]core.Scored, error) {
	fetch := 2 * depth
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
				// The group of equal scores may go on past the fetch.
				return candidatesByKey(ctx, reader, query, fetch)
			}
			return out, nil
		}
		score := settle(m.Score)
		if n >= depth && score != out[depth-1].Score {
			return out, nil
		}
		key, err := hitKey(m)
		if err != nil {
			return nil, err
		}
		out = append(out, core.Scored{Key: key, Score: score})
	}
}

// settle rounds a BM25 score to float32 precision. bluge sums a document's
// clause scores in an order that depends on the segment layout, so two
// documents of the same true score can differ in the last bits, and which
// of them ranks first would depend on the ingest history; rounded, they tie
// and are ordered by key.
func settle(s float64) float64 { return float64(float32(s)) }

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

// byScoreThenKey orders matches by their settled score, best first, and
// equal scores by key: bluge's own order of equal scores is its internal
// document number, which merges change.
var byScoreThenKey = blugesearch.SortOrder{
	blugesearch.SortBy(settledScore{}).Desc(),
	blugesearch.SortBy(blugesearch.Field("_id")),
}

// settledScore is the sort source of a match's settled score.
type settledScore struct{}

func (settledScore) Fields() []string { return nil }

func (settledScore) Value(m *blugesearch.DocumentMatch) []byte {
	return numeric.MustNewPrefixCodedInt64(numeric.Float64ToInt64(settle(m.Score)), 0)
}

// candidatesByKey returns the n best hits by (settled) BM25, equal scores by
// key; the key is read from the sort value, not the stored field.
func candidatesByKey(ctx context.Context, reader *bluge.Reader, query bluge.Query, n int) ([]core.Scored, error) {
	it, err := reader.Search(ctx, bluge.NewTopNSearch(n, query).SortByCustom(byScoreThenKey))
	if err != nil {
		return nil, fmt.Errorf("blugeindex: search: %w", err)
	}
	out := make([]core.Scored, 0, n)
	for {
		m, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("blugeindex: search: %w", err)
		}
		if m == nil {
			return out, nil
		}
		key, ok := parseKey(string(m.SortValue[1]))
		if !ok {
			return nil, fmt.Errorf("blugeindex: hit without a valid key (doc %d)", m.Number)
		}
		out = append(out, core.Scored{Key: key, Score: settle(m.Score)})
	}
}
