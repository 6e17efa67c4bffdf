package embedding_test

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

// BenchmarkUpdate embeds EMBED_N (default 20,000) synthetic resources
// (test/perf/synth, the scale work's catalog) with the hash embedder into a
// fresh HNSW index, the work of a large ingest's background embedding:
//
//	EMBED_N=100000 go test -run '^$' -bench Update -benchtime 1x -timeout 1h ./core/embedding/
//
// "one-by-one" is Update as it was before it used both cores (batches of
// 64 in order, each vector through Upsert), "update" is Update. The store
// of vectors discards them. Each reports resources/s.
func BenchmarkUpdate(b *testing.B) {
	n := 20_000
	if s := os.Getenv("EMBED_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	shared, err := synth.SharedDir()
	if err != nil {
		b.Skip(err)
	}
	g, err := synth.New(shared, 1)
	if err != nil {
		b.Skip(err)
	}
	rs := make([]core.Resource, n)
	for i := range rs {
		it := g.Item(i, 0)
		rs[i] = core.Resource{Catalog: core.National, ID: it.ID, NameSV: it.NameSV, NameEN: it.NameEN,
			Synonyms: it.Synonyms, Category: it.Category, DescriptionSV: it.DescriptionSV, DescriptionEN: it.DescriptionEN}
	}
	ctx := context.Background()
	e := embedder.NewHash()
	for _, mode := range []string{"one-by-one", "update"} {
		b.Run(mode, func(b *testing.B) {
			var took time.Duration
			for range b.N {
				ix := hnsw.NewCatalogIndex(ports.EmbeddingDim)
				start := time.Now()
				var done int
				if mode == "update" {
					s := embedding.New(e, discard{}, ix, nil, slog.New(slog.DiscardHandler))
					if done, err = s.Update(ctx, rs, nil); err != nil {
						b.Fatal(err)
					}
				} else {
					done = oneByOne(b, e, ix, rs)
				}
				took += time.Since(start)
				if done != n || ix.Len() != n {
					b.Fatalf("%d done, %d indexed, want %d", done, ix.Len(), n)
				}
			}
			b.ReportMetric(float64(b.N*n)/took.Seconds(), "resources/s")
		})
	}
}

// oneByOne is the loop of Update before it used both cores.
func oneByOne(b *testing.B, e ports.Embedder, ix ports.VectorIndex, rs []core.Resource) int {
	ctx := context.Background()
	done := 0
	for start := 0; start < len(rs); start += 64 {
		batch := rs[start:min(start+64, len(rs))]
		texts := make([]string, len(batch))
		for i := range batch {
			texts[i] = core.EmbeddingText(&batch[i])
		}
		vecs, err := e.EmbedDocuments(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		for i := range batch {
			if err := ix.Upsert(ctx, batch[i].Key(), vecs[i]); err != nil {
				b.Fatal(err)
			}
			done++
		}
	}
	return done
}

type discard struct{}

func (discard) PutVectors(context.Context, string, []ports.StoredVector) error { return nil }
func (discard) ScanVectors(context.Context, string, func(ports.StoredVector) error) error {
	return nil
}
func (discard) DropVectorsExcept(context.Context, string) (int, error) { return 0, nil }
