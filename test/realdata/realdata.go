// Package realdata builds test fixtures from the real reference files: the
// publisher's national exports mapped by the boverket adapter, Danish Tabel 7
// rows, and a badger store holding them. Shared by the core's tests.
package realdata

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// National maps the publisher's real exports as the JSON source does; an
// empty name leaves that culture out. Merging 02.06 sv with 02.07 en takes
// the facts (values, units, conversions) of 02.07 for the ids both carry.
func National(t testing.TB, sv, en string) []core.Resource {
	t.Helper()
	var s, e *boverket.Export
	var err error
	if sv != "" {
		if s, err = boverket.DecodeExport(boverkettest.LoadExport(t, sv)); err != nil {
			t.Fatalf("decoding %s: %v", sv, err)
		}
	}
	if en != "" {
		if e, err = boverket.DecodeExport(boverkettest.LoadExport(t, en)); err != nil {
			t.Fatalf("decoding %s: %v", en, err)
		}
	}
	return boverket.Merge(s, e).Resources
}

// DKBRRows maps rows of the real BR18 Tabel 7 (data/dkbr/br18-tabel7-201222.csv)
// the way an operator batch loads them into dkbr: the id is "Sorterings ID",
// the Danish name "Navn DK", A1-A3 the value per declared unit, the unit as
// published (upper case: M2, M3), and "Masse faktor", the kilograms per
// declared unit, as the conversion kg/<unit>. Only rows declared per one unit
// are accepted, so the value is per unit.
func DKBRRows(t testing.TB, ids ...string) []core.Resource {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(shareddata.Read(t, "data", "dkbr", "br18-tabel7-201222.csv"))).ReadAll()
	if err != nil {
		t.Fatalf("reading BR18 table: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(id, s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("BR18 row %s: %q is not a number", id, s)
		}
		return v
	}
	wanted := map[string]bool{}
	for _, id := range ids {
		wanted[id] = true
	}
	byID := map[string]core.Resource{}
	for _, row := range rows[1:] {
		id := row[col["Sorterings ID"]]
		if !wanted[id] || row[col["Deklareret faktor (FU)"]] != "1" {
			continue
		}
		unit := row[col["Deklareret enhed (FU)"]]
		r := core.Resource{
			ID: id, Catalog: core.DKBR, Source: core.SourceDKBR,
			NameDA:      row[col["Navn DK"]],
			A1A3:        core.F(num(id, row[col["Global Opvarmning, modul A1-A3"]])),
			GWPUnit:     "kg CO2 eq./" + unit,
			Unit:        unit,
			Conversions: map[string]float64{"kg/" + unit: num(id, row[col["Masse faktor"]])},
			Category:    row[col["Data type"]],
			Version:     "BR18 201222",
		}
		r.Normalize()
		byID[id] = r
	}
	out := make([]core.Resource, 0, len(ids))
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			t.Fatalf("BR18 table has no row %s declared per one unit", id)
		}
		out = append(out, r)
	}
	return out
}

// OpenStore opens a real badger store in a temporary directory and applies
// the resources, each to its own catalog.
func OpenStore(t testing.TB, sets ...[]core.Resource) *badgerstore.Store {
	t.Helper()
	st, err := badgerstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	put := map[core.CatalogID][]ports.StoredResource{}
	for _, rs := range sets {
		for _, r := range rs {
			put[r.Catalog] = append(put[r.Catalog], ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		}
	}
	for cat, p := range put {
		if err := st.Apply(context.Background(), cat, ports.Changes{Put: p}); err != nil {
			t.Fatalf("apply to %s: %v", cat, err)
		}
	}
	return st
}

// Find returns the resource with id from rs.
func Find(t testing.TB, rs []core.Resource, id string) core.Resource {
	t.Helper()
	for _, r := range rs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no resource %s", id)
	return core.Resource{}
}
