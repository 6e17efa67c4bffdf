package search_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/search"
	"github.com/climatesearch/climatesearch/ports"
)

// realCatalog loads the merged real exports (235 resources) into a badger
// store, the bluge index and the HNSW with the hash embedder.
func realCatalog(b testing.TB) *search.Service {
	b.Helper()
	sv, err := boverket.DecodeExport(boverkettest.LoadExport(b, boverkettest.Export0206SV))
	if err != nil {
		b.Fatal(err)
	}
	en, err := boverket.DecodeExport(boverkettest.LoadExport(b, boverkettest.Export0207EN))
	if err != nil {
		b.Fatal(err)
	}
	m := boverket.Merge(sv, en)
	st, err := badgerstore.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := context.Background()
	var puts []ports.StoredResource
	for _, r := range m.Resources {
		r.Catalog, r.Source = core.National, core.SourceNational
		r.Normalize()
		puts = append(puts, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
	}
	if err := st.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
		b.Fatal(err)
	}
	ix, err := blugeindex.New()
	if err != nil {
		b.Fatal(err)
	}
	rs := make([]core.Resource, len(puts))
	for i := range puts {
		rs[i] = puts[i].Resource
	}
	if err := ix.Upsert(ctx, rs); err != nil {
		b.Fatal(err)
	}
	vec := embedding.New(embedder.NewHash(), st, hnsw.NewCatalogIndex(ports.EmbeddingDim), st, slog.New(slog.DiscardHandler))
	if _, _, err := vec.Boot(ctx); err != nil {
		b.Fatal(err)
	}
	return search.New(search.Config{VectorWeight: 0.5}, st, ix, core.NewVisibility(), vec, nil)
}

var queries = []string{"spånskiva", "betong C30/37", "glasull lösull vindsbjälklag", "stone wool roof board", "KL-trä", "gipskiva"}

func benchSearch(b *testing.B, vector bool) {
	svc := realCatalog(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		resp, err := svc.Search(ctx, core.SearchRequest{Query: q, Lang: core.Swedish, Vector: vector})
		if err != nil || len(resp.Results) == 0 {
			b.Fatalf("%q: %v", q, err)
		}
	}
}

// BenchmarkSearchFullText is the whole in-process search path, BM25 only.
func BenchmarkSearchFullText(b *testing.B) { benchSearch(b, false) }

// BenchmarkSearchHybrid adds the hash embedder, the HNSW and fusion.
func BenchmarkSearchHybrid(b *testing.B) { benchSearch(b, true) }
