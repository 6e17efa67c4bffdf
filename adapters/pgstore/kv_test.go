package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/test/pgtest"
)

// Writing an expiring value deletes the rows that have expired, so one
// row per console sign-in does not pile up; rows without expiry stay.
func TestKVPurgesExpiredRows(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	s := openT(t, url)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.PutTTL(ctx, "forever", []byte("v"), 0))
	must(s.PutTTL(ctx, "short", []byte("v"), time.Microsecond))
	eventually(t, "expired", func() bool {
		_, ok, err := s.GetKV(ctx, "short")
		must(err)
		return !ok
	})
	if n := query(t, url, `SELECT count(*) FROM kv WHERE key = 'short'`); n[0] != "1" {
		t.Fatalf("an expired row was deleted before any expiring write: %v", n)
	}
	must(s.PutTTL(ctx, "session", []byte("v"), time.Hour))
	if got := query(t, url, `SELECT key FROM kv ORDER BY key`); len(got) != 2 || got[0] != "forever" || got[1] != "session" {
		t.Fatalf("rows after an expiring write: %v", got)
	}
}

// BenchmarkGetKV is the store read of a console request (its session):
//
//	go test -run '^$' -bench GetKV ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkGetKV(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.Shared(b).NewDB(b), nil)
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
