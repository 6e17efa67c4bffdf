package demosnapshot_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/adapters/demosnapshot"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.CatalogSource = demosnapshot.Source{}

func fetch(t *testing.T) core.Release {
	t.Helper()
	rel, err := demosnapshot.Source{}.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func decode(t *testing.T, name string) *boverket.Export {
	t.Helper()
	e, err := boverket.DecodeExport(boverkettest.LoadExport(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func leaves(nodes []boverket.CategoryNode) []boverket.CategoryNode {
	var out []boverket.CategoryNode
	for _, n := range nodes {
		if len(n.Children) > 0 {
			out = append(out, leaves(n.Children)...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

func TestRelease(t *testing.T) {
	s := demosnapshot.Source{}
	if s.Name() != "demo-snapshot" {
		t.Errorf("name %q", s.Name())
	}
	rel := fetch(t)
	if rel.Catalog != core.National || rel.Origin != core.OriginFixture || rel.Complete || rel.Version != "demo-02.07.000" || rel.Rejected != 0 {
		t.Errorf("release %s %s complete=%v version %q rejected %d", rel.Catalog, rel.Origin, rel.Complete, rel.Version, rel.Rejected)
	}
	// Every resource of the current release, 02.07.000.
	if len(rel.Resources) != 230 {
		t.Fatalf("%d resources, want the 230 of 02.07.000", len(rel.Resources))
	}
	seen := map[string]bool{}
	for _, r := range rel.Resources {
		if seen[r.ID] {
			t.Errorf("%s twice", r.ID)
		}
		seen[r.ID] = true
		if r.Catalog != core.National || r.Source != core.SourceNational {
			t.Errorf("%s: catalog %q source %q", r.ID, r.Catalog, r.Source)
		}
		if r.NameSV == "" || r.NameEN == "" || r.A1A3 == nil || r.Unit == "" || r.GWPUnit == "" || r.CategoryCode == "" || r.Version == "" {
			t.Errorf("%s: a fact is missing: %+v", r.ID, r)
		}
		// Facts only: none of the publisher's prose (synonyms are facts a
		// search needs, and are kept).
		if r.DescriptionSV != "" || r.DescriptionEN != "" || r.DescriptionDA != "" || r.ApplicabilitySV != "" ||
			r.ApplicabilityEN != "" || r.Description != "" {
			t.Errorf("%s carries prose", r.ID)
		}
		if r.Version != "02.07.000" {
			t.Errorf("%s: version %q, want the current release's", r.ID, r.Version)
		}
	}
}

// TestWholeCurrentRelease: a fresh offline start answers for every resource
// the publisher's current release has, with its synonyms.
func TestWholeCurrentRelease(t *testing.T) {
	got := map[string]core.Resource{}
	for _, r := range fetch(t).Resources {
		got[r.ID] = r
	}
	en := decode(t, boverkettest.Export0207EN)
	for _, r := range en.Resources {
		if _, ok := got[string(r.ResourceID)]; !ok {
			t.Errorf("%s (%s) of 02.07.000 is not in the snapshot", r.ResourceID, r.Name)
		}
	}
	if len(got) != len(en.Resources) {
		t.Errorf("%d resources, 02.07.000 has %d", len(got), len(en.Resources))
	}
	// The energy rows new in 02.07.000 have their Swedish names from the
	// Names map; a product keeps the publisher's search synonyms.
	if r := got["6100000008"]; r.NameSV == "" || r.NameEN == "" || r.A1A3 == nil {
		t.Errorf("6100000008: %+v", r)
	}
	if r := got["6000000000"]; r.Synonyms == "" {
		t.Errorf("6000000000 has no synonyms: %+v", r)
	}
}

func TestEveryCategoryOfBothReleases(t *testing.T) {
	rel := fetch(t)
	titles, titlesEN, codes := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, r := range rel.Resources {
		titles[r.Category], titlesEN[r.CategoryEN], codes[r.CategoryCode] = true, true, true
	}
	sv := leaves(decode(t, boverkettest.Export0206SV).Categories)
	if len(sv) != 11 {
		t.Fatalf("02.06 tree has %d leaves, want 11", len(sv))
	}
	for _, n := range sv {
		if !titles[n.Title] {
			t.Errorf("02.06 category %q (%s) not represented", n.Title, n.ID)
		}
	}
	en := leaves(decode(t, boverkettest.Export0207EN).Categories)
	if len(en) != 12 {
		t.Fatalf("02.07 tree has %d leaves, want 12", len(en))
	}
	for _, n := range en {
		if !codes[string(n.ID)] || !titlesEN[n.Title] {
			t.Errorf("02.07 category %q (%s) not represented", n.Title, n.ID)
		}
	}
}

// Every resource is the production mapping of the real exports, prose aside.
func TestValuesEqualTheRealExports(t *testing.T) {
	m := boverket.Merge(decode(t, boverkettest.Export0206SV), decode(t, boverkettest.Export0207EN))
	real := map[string]core.Resource{}
	for _, r := range m.Resources {
		r.DescriptionSV, r.DescriptionEN, r.ApplicabilitySV, r.ApplicabilityEN = "", "", "", ""
		real[r.ID] = r
	}
	for _, r := range fetch(t).Resources {
		if want, ok := real[r.ID]; !ok {
			t.Errorf("%s is not in the real exports", r.ID)
		} else if !reflect.DeepEqual(r, want) {
			t.Errorf("%s differs from the real export:\n got %+v\nwant %+v", r.ID, r, want)
		}
	}
}

// A few values read off the real files by hand.
func TestKnownValues(t *testing.T) {
	got := map[string]core.Resource{}
	for _, r := range fetch(t).Resources {
		got[r.ID] = r
	}
	board := got["6000000000"]
	if board.NameSV != "Spånskiva" || board.NameEN != "Particle board" || *board.A1A3 != 0.39 || *board.A1A3Conservative != 0.488 ||
		*board.WasteFactor != 1.1 || board.Conversions["kg/m³"] != 700 || board.CategoryCode != "10" || board.Category != "Byggskivor" ||
		len(board.Transports) != 2 || board.Transports[1].DistanceKm != 600 {
		t.Errorf("6000000000: %+v", board)
	}
	el := got["6000000008"]
	if el.Unit != "kWh" || *el.A1A3 != 0.037 || el.A4 != nil || el.A51 != nil || el.Transports != nil || el.CategoryCode != "3" {
		t.Errorf("6000000008: %+v", el)
	}
	if d := got["6000000010"]; d.Conversions["MJ/liter"] != 35.8 || *d.A1A3 != 0.0899 || d.Unit != "MJ" {
		t.Errorf("6000000010: %+v", d)
	}
	if pv := got["6000000203"]; pv.Unit != "m²" || *pv.A1A3 != 95 || pv.GWPUnit != "kg CO2 eq./m²" {
		t.Errorf("6000000203: %+v", pv)
	}
	if re := got["6000000174"]; re.CategoryCode != "15" || re.CategoryEN != "Reused building products" || *re.A1A3 != 0 {
		t.Errorf("6000000174: %+v", re)
	}
}

func TestFetchReturnsFreshCopies(t *testing.T) {
	a := fetch(t)
	*a.Resources[0].A1A3 = -1
	a.Resources[0].NameSV = "changed"
	b := fetch(t)
	if *b.Resources[0].A1A3 == -1 || b.Resources[0].NameSV == "changed" {
		t.Error("a caller's edit leaked into the next fetch")
	}
}

func TestFetchHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (demosnapshot.Source{}).Fetch(ctx); err == nil {
		t.Error("no error on a cancelled context")
	}
}
