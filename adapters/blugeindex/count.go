package blugeindex

import (
	"context"
	"fmt"

	"github.com/blugelabs/bluge"

	"github.com/climatesearch/climatesearch/core"
)

// Count returns how many live documents match the query: the size of the
// whole match set Search ranks (the same analysis and clauses), without
// reading or ordering any of them. core/search uses it for the total of an
// answer that needs no more than a page.
func (x *Index) Count(ctx context.Context, q core.TextQuery) (int, error) {
	text := core.CleanText(q.Text)
	if text == "" {
		return 0, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.writer == nil {
		return 0, ErrClosed
	}
	reader, err := x.writer.Reader()
	if err != nil {
		return 0, fmt.Errorf("blugeindex: open reader: %w", err)
	}
	defer func() { _ = reader.Close() }()
	lex := x.lex
	query := buildQuery(planQuery(analyzeQuery(text, lex), lex, text, q.Lang, q.Catalogs))
	it, err := reader.Search(ctx, bluge.NewAllMatches(query))
	if err != nil {
		return 0, fmt.Errorf("blugeindex: count: %w", err)
	}
	n := 0
	for {
		m, err := it.Next()
		if err != nil {
			return 0, fmt.Errorf("blugeindex: count: %w", err)
		}
		if m == nil {
			return n, nil
		}
		n++
	}
}
