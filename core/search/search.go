// Package search answers search questions: it asks the full-text index for
// candidates and turns them into Hits from the store.
package search

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Service implements ports.Searcher.
type Service struct {
	store ports.ResourceStore
	text  ports.TextIndex
}

var _ ports.Searcher = (*Service)(nil)

// New returns a search service.
func New(store ports.ResourceStore, text ports.TextIndex) *Service {
	return &Service{store: store, text: text}
}

// Search validates the request, retrieves full-text candidates and returns them as hits.
func (s *Service) Search(ctx context.Context, req core.SearchRequest) (core.SearchResponse, error) {
	q := normalizeSpace(core.CleanText(req.Query))
	if q == "" {
		return core.SearchResponse{}, core.Invalidf("q is required: a few words in Swedish or English, e.g. q=spånskiva")
	}
	if n := utf8.RuneCountInString(q); n > core.MaxQueryLen {
		return core.SearchResponse{}, core.Invalidf("q is %d characters long; the limit is %d", n, core.MaxQueryLen)
	}
	if req.Limit == 0 {
		req.Limit = core.DefaultLimit
	}
	if req.Limit < 1 || req.Limit > core.MaxLimit {
		return core.SearchResponse{}, core.Invalidf("limit must be between 1 and %d", core.MaxLimit)
	}
	if req.Lang == "" {
		req.Lang = core.Swedish
	}
	if len(req.Catalogs) == 0 {
		req.Catalogs = core.Catalogs
	}
	resp := core.SearchResponse{Source: core.SourceFor(req.Catalogs), Query: q, Lang: req.Lang, Results: []core.Hit{}}
	if req.Vector {
		resp.Notes = append(resp.Notes, "vector search unavailable: no embedder is configured; results are full-text only")
	}
	if req.Rerank {
		resp.Notes = append(resp.Notes, "rerank unavailable: no reranker is configured; results keep their retrieval order")
	}
	scored, err := s.text.Search(ctx, core.TextQuery{Text: q, Lang: req.Lang, Catalogs: req.Catalogs, Limit: req.Limit})
	if err != nil {
		return core.SearchResponse{}, core.Unavailablef(err, "full-text index failed")
	}
	keys := make([]core.Key, len(scored))
	for i, sc := range scored {
		keys[i] = sc.Key
	}
	stored, err := s.store.GetMany(ctx, keys)
	if err != nil {
		return core.SearchResponse{}, core.Unavailablef(err, "store unavailable")
	}
	byKey := make(map[core.Key]core.Resource, len(stored))
	for _, sr := range stored {
		byKey[sr.Resource.Key()] = sr.Resource
	}
	for _, sc := range scored {
		r, ok := byKey[sc.Key]
		if !ok || r.Withdrawn {
			continue // the index lags the store by at most one ingest; never show a withdrawn resource
		}
		r.Localize(req.Lang)
		resp.Results = append(resp.Results, core.Hit{
			Resource:    r,
			Lang:        req.Lang,
			Score:       sc.Score,
			MatchSource: core.MatchFTS,
			Details:     core.DetailsPath(sc.Key),
		})
	}
	return resp, nil
}

// normalizeSpace collapses runs of whitespace in a query.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
