package ingest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
)

// failingStore fails Apply while fail is set, as a full disk would.
type failingStore struct {
	*badgerstore.Store
	fail *atomic.Bool
}

func (s failingStore) Apply(ctx context.Context, c core.CatalogID, ch ports.Changes) error {
	if s.fail.Load() {
		return errors.New("no space left on device")
	}
	return s.Store.Apply(ctx, c, ch)
}

// TestFailedStoreWriteLeavesTheIndexAsItWas: an ingest builds its index
// change before the store write; when that write fails, the built change is
// undone, so the next ingest's commit publishes none of it: the renamed
// resource is still found by its old name, not by the new one, and the new
// resource is not found at all.
func TestFailedStoreWriteLeavesTheIndexAsItWas(t *testing.T) {
	ctx := context.Background()
	st, index := storeAndIndex(t)
	fail := &atomic.Bool{}
	svc := ingest.New(ingest.Config{}, failingStore{st, fail}, index, core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	v := 1.0
	res := func(id, name string) core.Resource {
		return core.Resource{ID: id, NameDA: name, Unit: "kg", A1A3: &v}
	}
	batch := func(rs ...core.Resource) core.Release {
		return core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Resources: rs}
	}
	if _, err := svc.Apply(ctx, batch(res("#T1", "Teglsten"), res("#T2", "Mursten"))); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	_, err := svc.Apply(ctx, batch(res("#T1", "Gipsplade"), res("#T3", "Stålbjælke")))
	if core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("Apply with the store failing: %v, want unavailable", err)
	}
	fail.Store(false)
	if _, err := svc.Apply(ctx, batch(res("#T4", "Træbjælke"))); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"teglsten": "dkbr:#T1", "mursten": "dkbr:#T2", "træbjælke": "dkbr:#T4", "gipsplade": "", "stålbjælke": ""} {
		hits, err := index.Search(ctx, core.TextQuery{Text: q, Lang: core.Swedish})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if len(hits) > 0 {
			got = hits[0].Key.String()
		}
		if got != want || len(hits) > 1 {
			t.Errorf("%q finds %v, want %q alone", q, hits, want)
		}
	}
}
