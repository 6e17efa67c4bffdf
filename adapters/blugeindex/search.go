package blugeindex

import (
	"context"
	"fmt"
	"strings"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/numeric"
	blugesearch "github.com/blugelabs/bluge/search"

	"github.com/climatesearch/climatesearch/core"
)

// Search returns the best matches, best first; equal scores are ordered by
// key so answers are stable. An empty query has no results.
//
// The query is analysed in every language (analyzeQuery), planned as
// weighted BM25 clauses over the fields (planQuery), its best candidates
// found by a pruned top-k over bluge's postings (topK), and rescored by how
// much of their names the query covers (rerank). Scores are comparable
// within one answer only.
func (x *Index) Search(ctx context.Context, q core.TextQuery) ([]core.Scored, error) {
	return x.search(ctx, q, x.blockTopK)
}

// finder returns the candidates of a plan: the depth best by settled BM25
// score and every further match that scores as the last of them, at most
// 2*depth in all (equal scores cut by key). topK and fullCandidates are the
// two ways, with the same answer.
type finder func(ctx context.Context, reader *bluge.Reader, p *plan, lex *lexicon, depth int) ([]core.Scored, error)

func (x *Index) search(ctx context.Context, q core.TextQuery, find finder) ([]core.Scored, error) {
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
	reader := x.reader // the last commit's (see Commit)

	lex := x.lex
	tq := analyzeQuery(text, lex)
	p := planQuery(tq, lex, text, q.Lang, q.Catalogs)
	// The candidates are the depth best by BM25, rescored by name coverage;
	// equal scores at the cut never depend on the segment layout (see
	// fullCandidates).
	out, err := find(ctx, reader, p, lex, max(limit, rerankDepth))
	if err != nil {
		return nil, err
	}
	rerank(out, tq, lex)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// fullCandidates finds the candidates with bluge's own search, which scores
// every match: the reference topK must agree with (topk_test.go). It
// returns the depth best hits by BM25 with their keys, and every further
// hit that scores as the last of them. bluge orders equal scores by its
// internal document number, which merges may change; taking the whole
// group of equal scores at the cut keeps the candidates, and so the answer,
// independent of the segment layout. The search fetches room for such a
// group. A larger group (thousands of resources named alike) is cut by key
// instead (candidatesByKey): ordering by key in bluge loads the key of every
// matching document, which doubles the cost of an ordinary search of the
// real catalog, but costs a sixth of reading and rescoring the whole group
// (20,000 equal names: 25 against 160 ms).
func fullCandidates(ctx context.Context, reader *bluge.Reader, p *plan, _ *lexicon, depth int) ([]core.Scored, error) {
	query := buildQuery(p)
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
