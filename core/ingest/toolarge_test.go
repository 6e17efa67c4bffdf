package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
)

// tightStore refuses writes of more than max resources as the badger store
// refuses a write larger than one transaction holds (KindInvalid), which a
// real store does only past about 100,000 resources.
type tightStore struct {
	*badgerstore.Store
	max int
}

func (s tightStore) Apply(ctx context.Context, c core.CatalogID, ch ports.Changes) error {
	if len(ch.Put) > s.max {
		return &core.Error{Kind: core.KindInvalid, Err: errors.New("Txn is too big to fit into one request"),
			Msg: "store: apply: too big for one transaction"}
	}
	return s.Store.Apply(ctx, c, ch)
}

// TestReleaseTooLargeForTheStoreIsRefusedWhole: a release the store cannot
// write in one transaction is refused as too large (413, with what to do),
// not as an outage, and changes nothing: neither the store nor the index.
func TestReleaseTooLargeForTheStoreIsRefusedWhole(t *testing.T) {
	ctx := context.Background()
	st, index := storeAndIndex(t)
	svc := ingest.New(ingest.Config{}, tightStore{st, 10}, index, core.NewVisibility(), nil, noEvents{}, ingest.Sources{},
		quiet)
	rel := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "R1"}
	for i := range 11 {
		v := float64(i)
		rel.Resources = append(rel.Resources, core.Resource{ID: fmt.Sprintf("#T%02d", i), NameDA: "Teglsten", Unit: "kg", A1A3: &v})
	}
	_, err := svc.Apply(ctx, rel)
	if core.KindOf(err) != core.KindTooLarge || !strings.Contains(err.Error(), "split") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("Apply of a release too large for the store: %v (kind %v), want too large, saying to split it", err, core.KindOf(err))
	}
	if n, err := st.Count(ctx, core.DKBR); err != nil || n != 0 {
		t.Fatalf("the store holds %d resources after the refusal (%v)", n, err)
	}
	if hits, err := index.Search(ctx, core.TextQuery{Text: "teglsten"}); err != nil || len(hits) != 0 {
		t.Fatalf("the index finds %d resources after the refusal (%v)", len(hits), err)
	}
	// Split, it goes through.
	for _, part := range [][]core.Resource{rel.Resources[:6], rel.Resources[6:]} {
		r := rel
		r.Resources = part
		if _, err := svc.Apply(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := st.Count(ctx, core.DKBR); n != 11 {
		t.Fatalf("after the split the store holds %d, want 11", n)
	}
}
