package badgerstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// TestDecodedCacheIsBounded: the decoded cache keeps at most maxDecoded
// keys however many are read, and reads stay exact for cached and
// uncached keys alike after they are rewritten.
func TestDecodedCacheIsBounded(t *testing.T) {
	defer func(n int64) { maxDecoded = n }(maxDecoded)
	maxDecoded = 10
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	write := func(name string) []core.Key {
		var puts []ports.StoredResource
		var keys []core.Key
		for i := range 30 {
			sr := full(core.National, fmt.Sprint("r", i))
			sr.Resource.NameSV = fmt.Sprintf("%s %d", name, i)
			puts = append(puts, sr)
			keys = append(keys, sr.Resource.Key())
		}
		if err := s.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	keys := write("first")
	for range 2 {
		if _, err := s.GetMany(ctx, keys); err != nil {
			t.Fatal(err)
		}
	}
	entries := 0
	s.decoded.Range(func(any, any) bool { entries++; return true })
	if entries > 10 || s.cachedN.Load() != int64(entries) {
		t.Fatalf("%d cached keys (counted %d), want at most 10", entries, s.cachedN.Load())
	}
	write("second")
	srs, err := s.GetMany(ctx, keys)
	if err != nil || len(srs) != len(keys) {
		t.Fatalf("GetMany = %d, %v", len(srs), err)
	}
	for i, sr := range srs {
		if want := fmt.Sprintf("second %d", i); sr.Resource.NameSV != want {
			t.Errorf("%s: %q, want %q", keys[i], sr.Resource.NameSV, want)
		}
	}
}
