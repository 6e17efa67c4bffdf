package pgstore

import (
	"context"
	"testing"

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
