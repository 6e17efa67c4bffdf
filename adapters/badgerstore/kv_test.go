package badgerstore

import (
	"context"
	"testing"
	"time"
)

// BenchmarkGetKV is the store read of a console request (its session):
//
//	go test -run '^$' -bench GetKV ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkGetKV(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.PutTTL(ctx, "session/x", []byte("2026-11-24T16:00:00Z"), time.Hour); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok, err := s.GetKV(ctx, "session/x"); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}
