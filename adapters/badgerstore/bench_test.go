package badgerstore

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// BenchmarkApply10000 applies a release of 10,000 full resources (every
// one rewritten each time) in one Apply, as adapters/pgstore's benchmark:
//
//	go test -run '^$' -bench Apply10000 ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkApply10000(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; b.Loop(); i++ {
		g := i + 1
		ps := make([]ports.StoredResource, 10000)
		for j := range ps {
			r := full(core.National, fmt.Sprintf("%05d", j)).Resource
			r.NameSV = fmt.Sprintf("resource %d generation %d", j, g)
			r.A1A3 = core.F(float64(g*100000 + j))
			r.Version = strconv.Itoa(g)
			ps[j] = ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
		}
		if err := s.Apply(ctx, core.National, ports.Changes{Put: ps, Meta: &core.CatalogMeta{Catalog: core.National, Version: strconv.Itoa(g)}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetMany20 reads a page of 20 resources, as a search does:
//
//	go test -run '^$' -bench GetMany20 ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkGetMany20(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ps []ports.StoredResource
	for j := range 1000 {
		ps = append(ps, full(core.National, fmt.Sprintf("%05d", j)))
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: ps}); err != nil {
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
