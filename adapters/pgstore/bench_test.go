package pgstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/climatesearch/climatesearch/core"

	"github.com/climatesearch/climatesearch/test/pgtest"
)

// BenchmarkApply10000 applies a release of 10,000 full resources (every
// one rewritten each time) in one Apply:
//
//	go test -run '^$' -bench Apply10000 ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkApply10000(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.Shared(b).NewDB(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := s.Apply(ctx, "national", generation(i+1, 10000)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetMany20 reads a page of 20 resources, as a search does:
//
//	go test -run '^$' -bench GetMany20 ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkGetMany20(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.Shared(b).NewDB(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Apply(ctx, "national", generation(1, 1000)); err != nil {
		b.Fatal(err)
	}
	keys := make([]core.Key, 20)
	for i := range keys {
		keys[i] = core.Key{Catalog: core.National, ID: fmt.Sprintf("%05d", i*37)}
	}
	for b.Loop() {
		if rs, err := s.GetMany(ctx, keys); err != nil || len(rs) != 20 {
			b.Fatal(len(rs), err)
		}
	}
}
