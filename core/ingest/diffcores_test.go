package ingest_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
)

// TestLargeDiffOnCores: a release large enough to be normalised and hashed
// on every core is diffed as one resource at a time would be: duplicates
// keep their first row, ids left empty are rejected, unchanged resources
// are recognised by their hash, the changed ids come in the release's
// order, and every stored hash is its resource's.
func TestLargeDiffOnCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	ctx := context.Background()
	store, index := storeAndIndex(t)
	svc := ingest.New(ingest.Config{}, store, index, core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	block := func(i int, value float64) core.Resource {
		return core.Resource{ID: fmt.Sprintf("#D%04d", i), NameDA: fmt.Sprintf("  Blok\u200b %d ", i), Unit: "kg", A1A3: core.F(value)}
	}
	first := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "one"}
	for i := range 1000 {
		first.Resources = append(first.Resources, block(i, float64(i)))
	}
	if res, err := svc.Apply(ctx, first); err != nil || res.Upserted != 1000 {
		t.Fatalf("first release: %+v %v", res, err)
	}

	// 600 unchanged, 300 changed, 100 new; then 20 repeats of changed ids
	// with other values and 5 rows without an id.
	second := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "two"}
	var want []string
	for i := range 1100 {
		v := float64(i)
		if i >= 600 {
			v += 0.5
			want = append(want, fmt.Sprintf("dkbr:#D%04d", i))
		}
		second.Resources = append(second.Resources, block(i, v))
	}
	for i := range 20 {
		second.Resources = append(second.Resources, block(600+i, -1))
	}
	for range 5 {
		second.Resources = append(second.Resources, core.Resource{NameDA: "uden id", Unit: "kg", A1A3: core.F(1)})
	}
	res, err := svc.Apply(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Upserted != 500 || res.Unchanged != 600 || res.Rejected != 25 || res.Seen != 1125 {
		t.Fatalf("second release: upserted %d unchanged %d rejected %d seen %d; want 500, 600, 25, 1125",
			res.Upserted, res.Unchanged, res.Rejected, res.Seen)
	}
	got := make([]string, len(res.Changed))
	for i, ref := range res.Changed {
		got[i] = ref
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changed ids out of the release's order: first %v, want %v", got[:3], want[:3])
	}

	keys := make([]core.Key, 1100)
	for i := range keys {
		keys[i] = core.Key{Catalog: core.DKBR, ID: fmt.Sprintf("#D%04d", i)}
	}
	stored, err := store.GetMany(ctx, keys)
	if err != nil || len(stored) != 1100 {
		t.Fatalf("stored: %d %v", len(stored), err)
	}
	for i, sr := range stored {
		r := sr.Resource
		wantValue := float64(i)
		if i >= 600 {
			wantValue += 0.5 // the first row of a repeated id, not its repeat's -1
		}
		if r.A1A3 == nil || *r.A1A3 != wantValue || r.NameDA != fmt.Sprintf("Blok %d", i) || r.Catalog != core.DKBR {
			t.Fatalf("%s stored as %q %v in %q, want %q %v (normalised)", keys[i], r.NameDA, r.A1A3, r.Catalog, fmt.Sprintf("Blok %d", i), wantValue)
		}
		if sr.Hash != core.ContentHash(&r) {
			t.Fatalf("%s: stored hash %s is not its resource's", keys[i], sr.Hash)
		}
	}

	// The same release again changes nothing.
	if res, err := svc.Apply(ctx, second); err != nil || res.Upserted != 0 || res.Unchanged != 1100 || res.Rejected != 25 {
		t.Fatalf("second release again: %+v %v", res, err)
	}
}
