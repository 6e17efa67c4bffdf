package compare_test

import (
	"context"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/compare"
	"github.com/climatesearch/climatesearch/core/lookup"
	"github.com/climatesearch/climatesearch/core/search"
	"github.com/climatesearch/climatesearch/test/realdata"
)

// Fixtures from the real reference files, shared with the lookup tests.
var (
	national  = realdata.National
	dkbrRows  = realdata.DKBRRows
	openStore = realdata.OpenStore
	find      = realdata.Find
)

// newService is the compare service over the real lookup over the store,
// with the real full-text search over the same resources for Alternatives.
func newService(t testing.TB, sets ...[]core.Resource) *compare.Service {
	t.Helper()
	st := openStore(t, sets...)
	vis := core.NewVisibility()
	ix, err := blugeindex.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for _, rs := range sets {
		if err := ix.Upsert(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
	}
	l := lookup.New(st, vis)
	return compare.New(l, l, search.New(search.Config{}, st, ix, vis, nil, nil))
}
