package blugeindex

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/blugelabs/bluge"

	"github.com/climatesearch/climatesearch/core"
)

// An accumulation cut short (its search cancelled after the postings were
// added) leaves nothing behind in the arrays the next one reuses: the
// next deep lists are still exactly the walk's.
func TestAccumulationCancelledLeavesNothingBehind(t *testing.T) {
	rs := loadCatalog(t)
	x := newIndex(t, rs)
	x.blocks.minLen = 1 // every list through the block cache
	queries := probeQueries(rs, 11)
	deep := func(ctx context.Context, text string, mode int) ([]scoredDoc, float64, error) {
		accumulation = mode
		defer func() { accumulation = accumulateWhenCheaper }()
		var docs []scoredDoc
		var last float64
		err := x.withPlan(core.TextQuery{Text: text, Lang: core.Swedish}, func(r *bluge.Reader, p *plan, lex *lexicon) error {
			snap, err := snapshotOf(context.Background(), r)
			if err != nil {
				return err
			}
			docs, last, err = bestByBM25(ctx, snap, p, lex, core.MaxMatchSet, &x.blocks, math.Inf(-1), x.splitFrom())
			return err
		})
		return docs, last, err
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	compared := 0
	for _, text := range queries {
		if _, _, err := deep(cancelled, text, accumulateAlways); err == nil {
			continue // a query without clauses reads nothing
		}
		want, wantLast, err := deep(context.Background(), text, accumulateNever)
		if err != nil {
			t.Fatal(err)
		}
		got, gotLast, err := deep(context.Background(), text, accumulateAlways)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || gotLast != wantLast {
			t.Fatalf("%q after a cancelled accumulation: %d candidates (last %v), the walk's %d (last %v)", text, len(got), gotLast, len(want), wantLast)
		}
		compared++
	}
	if compared < 10 {
		t.Fatalf("only %d queries compared", compared)
	}
}
