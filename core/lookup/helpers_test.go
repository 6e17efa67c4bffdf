package lookup_test

import "github.com/climatesearch/climatesearch/test/realdata"

// Fixtures from the real reference files, shared with the compare tests.
var (
	national  = realdata.National
	dkbrRows  = realdata.DKBRRows
	openStore = realdata.OpenStore
	find      = realdata.Find
)
