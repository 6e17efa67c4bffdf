package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

func TestReleaseFromBatchMapsNamesToTheCatalogLanguage(t *testing.T) {
	rel, err := ReleaseFromBatch(core.ResourceBatch{Catalog: "br25", Version: "BR25", Resources: []core.BatchItem{
		{ID: "#G0164", Name: "Beton C30/37", NameEN: "Concrete C30/37", A1A3: core.F(0.1), Unit: "kg", Conversions: map[string]float64{"kg/m3": 2400}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := rel.Resources[0]
	if rel.Catalog != core.DKBR || rel.Origin != core.OriginFile || rel.Complete {
		t.Fatalf("release: %+v", rel)
	}
	if r.NameDA != "Beton C30/37" || r.NameEN != "Concrete C30/37" || r.Version != "BR25" || r.GWPUnit != "kg CO2 eq./kg" {
		t.Fatalf("resource: %+v", r)
	}
	rel, err = ReleaseFromBatch(core.ResourceBatch{Catalog: "national", Resources: []core.BatchItem{{ID: "1", Name: "Spånskiva", Version: "02.07.000"}}})
	if err != nil || rel.Resources[0].NameSV != "Spånskiva" || rel.Version != "02.07.000" {
		t.Fatalf("national batch: %+v %v", rel, err)
	}
}

func TestReleaseFromBatchRefusesBadInputWhole(t *testing.T) {
	cases := map[string]struct {
		b    core.ResourceBatch
		want string
	}{
		"no catalog":      {core.ResourceBatch{Resources: []core.BatchItem{{ID: "1"}}}, "catalog is required"},
		"unknown catalog": {core.ResourceBatch{Catalog: "se", Resources: []core.BatchItem{{ID: "1"}}}, `unknown catalog "se"`},
		"empty":           {core.ResourceBatch{Catalog: "dkbr"}, "resources is empty"},
		"missing id":      {core.ResourceBatch{Catalog: "dkbr", Resources: []core.BatchItem{{ID: "1"}, {Name: "x"}}}, "resources[1]: id is required"},
		"colon in id":     {core.ResourceBatch{Catalog: "dkbr", Resources: []core.BatchItem{{ID: "a:b"}}}, "may not contain"},
		"bad conversion":  {core.ResourceBatch{Catalog: "dkbr", Resources: []core.BatchItem{{ID: "1", Conversions: map[string]float64{"kgm3": 1}}}}, "must look like <unit>/<unit>"},
		"zero conversion": {core.ResourceBatch{Catalog: "dkbr", Resources: []core.BatchItem{{ID: "1", Conversions: map[string]float64{"kg/m3": 0}}}}, "must be positive"},
		"conflicting duplicate": {core.ResourceBatch{Catalog: "dkbr", Resources: []core.BatchItem{
			{ID: "1", A1A3: core.F(1)}, {ID: "1", A1A3: core.F(2)}}}, "repeats resources[0] with different values"},
	}
	for name, tc := range cases {
		_, err := ReleaseFromBatch(tc.b)
		if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want invalid containing %q", name, err, tc.want)
		}
	}
	// An identical repeat is harmless and collapses.
	rel, err := ReleaseFromBatch(core.ResourceBatch{Catalog: "dkbr", Resources: []core.BatchItem{{ID: "1", A1A3: core.F(1)}, {ID: "1", A1A3: core.F(1)}}})
	if err != nil || len(rel.Resources) != 1 {
		t.Fatalf("identical duplicates: %v %v", rel, err)
	}
}

func TestAdvanceKeepsThePhase(t *testing.T) {
	next := mustTime("2026-11-16T03:00:00Z")
	now := mustTime("2026-11-30T12:00:00Z")
	got := advance(next, now, 168*time.Hour)
	if want := mustTime("2026-12-07T03:00:00Z"); !got.Equal(want) {
		t.Fatalf("advance = %s, want %s", got, want)
	}
}
