package search_test

import (
	"context"
	"errors"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/search"
)

// brokenIndex is the text index with its count or its ranking failing.
type brokenIndex struct {
	*blugeindex.Index
	count, search, prefix error
}

func (b brokenIndex) RankedPrefix(ctx context.Context, q core.TextQuery, n int, keys []core.Key) ([]core.Scored, bool, []core.ListPlace, int, error) {
	if b.prefix != nil {
		return nil, false, nil, 0, b.prefix
	}
	return b.Index.RankedPrefix(ctx, q, n, keys)
}

func (b brokenIndex) Count(ctx context.Context, q core.TextQuery) (int, error) {
	if b.count != nil {
		return 0, b.count
	}
	return b.Index.Count(ctx, q)
}

func (b brokenIndex) Search(ctx context.Context, q core.TextQuery) ([]core.Scored, error) {
	if b.search != nil {
		return nil, b.search
	}
	return b.Index.Search(ctx, q)
}

// A full-text page takes its total from the index's count, asked beside
// the ranking: a page of a larger match set carries the count; when the
// count fails, that page fails as unavailable (never a wrong total) while
// a page holding every match still answers; a failing ranking fails the
// page at once.
func TestPageTotalFromTheCountBesideTheRanking(t *testing.T) {
	ctx := context.Background()
	e := newCatalogEnv(t)
	e.put(t, realResources(t), false)
	want, err := e.ix.Count(ctx, core.TextQuery{Text: "betong", Lang: core.Swedish})
	if err != nil || want <= 5 {
		t.Fatalf("betong matches %d (%v): the test needs more than a page of 5", want, err)
	}
	svc := func(ix brokenIndex) *search.Service {
		return search.New(search.Config{}, e.st, ix, core.NewVisibility(), e.vec, nil)
	}
	page := core.SearchRequest{Query: "betong", Lang: core.Swedish, Limit: 5}
	resp, err := svc(brokenIndex{Index: e.ix}).Search(ctx, page)
	if err != nil || resp.Total != want || len(resp.Results) != 5 {
		t.Fatalf("total %d of %d results (%v), want %d of 5", resp.Total, len(resp.Results), err, want)
	}

	failing := errors.New("count failed")
	_, err = svc(brokenIndex{Index: e.ix, count: failing}).Search(ctx, page)
	if core.KindOf(err) != core.KindUnavailable || !errors.Is(err, failing) {
		t.Fatalf("a page of a larger match set with the count failing: %v, want unavailable", err)
	}
	all := core.SearchRequest{Query: "betong", Lang: core.Swedish, Limit: want + 10}
	resp, err = svc(brokenIndex{Index: e.ix, count: failing}).Search(ctx, all)
	if err != nil || resp.Total != want {
		t.Fatalf("a page holding every match with the count failing: total %d (%v), want %d", resp.Total, err, want)
	}

	_, err = svc(brokenIndex{Index: e.ix, search: errors.New("ranking failed")}).Search(ctx, page)
	if core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("the ranking failing: %v, want unavailable", err)
	}
}

// A hybrid search fails as unavailable when the index fails to give the
// top of its full-text list (and the match set's count with it).
func TestHybridFailsWithTheList(t *testing.T) {
	ctx := context.Background()
	e := newCatalogEnv(t)
	e.put(t, realResources(t), true)
	svc := func(ix brokenIndex) *search.Service {
		return search.New(search.Config{}, e.st, ix, core.NewVisibility(), e.vec, nil)
	}
	req := core.SearchRequest{Query: "betong", Lang: core.Swedish, Limit: 5, Vector: true}
	if resp, err := svc(brokenIndex{Index: e.ix}).Search(ctx, req); err != nil || len(resp.Results) != 5 {
		t.Fatalf("%d results (%v), want 5", len(resp.Results), err)
	}
	failing := errors.New("list failed")
	_, err := svc(brokenIndex{Index: e.ix, prefix: failing}).Search(ctx, req)
	if core.KindOf(err) != core.KindUnavailable || !errors.Is(err, failing) {
		t.Fatalf("hybrid with the list failing: %v, want unavailable", err)
	}
}
