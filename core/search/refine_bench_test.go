package search_test

import (
	"context"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// BenchmarkSearchFaceted is a full-text search of the real catalog that
// resolves its whole match set: facets on category, unit and catalog (the
// total comes with it). docs/PERFORMANCE.md compares it with
// BenchmarkSearchFullText, the page-only path.
func BenchmarkSearchFaceted(b *testing.B) {
	svc := realCatalog(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		resp, err := svc.Search(ctx, core.SearchRequest{Query: q, Lang: core.Swedish, Refine: core.Refine{Facets: core.FacetFields}})
		if err != nil || len(resp.Results) == 0 || len(resp.Facets["unit"]) == 0 || resp.Total < len(resp.Results) {
			b.Fatalf("%q: %v %+v", q, err, resp.Facets)
		}
	}
}
