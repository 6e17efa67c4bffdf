package compare_test

import (
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/compare"
	"github.com/climatesearch/climatesearch/core/lookup"
	"github.com/climatesearch/climatesearch/test/realdata"
)

// Fixtures from the real reference files, shared with the lookup tests.
var (
	national  = realdata.National
	dkbrRows  = realdata.DKBRRows
	openStore = realdata.OpenStore
	find      = realdata.Find
)

// newService is the compare service over the real lookup over the store.
func newService(t testing.TB, sets ...[]core.Resource) *compare.Service {
	t.Helper()
	return compare.New(lookup.New(openStore(t, sets...), core.NewVisibility()))
}
