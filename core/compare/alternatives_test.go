package compare_test

import (
	"context"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/compare"
)

// realAlternatives is the compare service over the real national release
// (02.06 Swedish + 02.07 English, 235 resources) and three Danish rows.
func realAlternatives(t testing.TB) (*compare.Service, []core.Resource) {
	t.Helper()
	nat := national(t, boverkettest.Export0206SV, boverkettest.Export0207EN)
	return newService(t, nat, dkbrRows(t, "#G0701", "#G0530", "#G1075")), nat
}

// checkAlternatives asserts what holds for every answer: each value is the
// resource's own published value restated in the answer's unit (never
// another unit), lower than the given one, with its saving; siblings come
// first, then values ascend.
func checkAlternatives(t *testing.T, all []core.Resource, got core.Alternatives) {
	t.Helper()
	sawOther := false
	for i, a := range got.Alternatives {
		src := find(t, all, a.ID)
		v, ok := got.Impact.Value(&src)
		f, okF := compare.Factor(&src, got.Unit)
		if !ok || !okF {
			t.Fatalf("%s cannot be stated as %s per %s but was listed", a.Ref(), got.Impact, got.Unit)
		}
		if d := a.Value - v*f; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: value %v per %s, its published value restated is %v", a.Ref(), a.Value, got.Unit, v*f)
		}
		if a.Value >= got.Value {
			t.Errorf("%s: value %v is not lower than the given %v", a.Ref(), a.Value, got.Value)
		}
		if d := a.Saving - (got.Value - a.Value); d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: saving %v, want %v", a.Ref(), a.Saving, got.Value-a.Value)
		}
		if got.Value > 0 && (a.SavingPercent == nil || *a.SavingPercent <= 0 || *a.SavingPercent > 100) {
			t.Errorf("%s: saving percent %v", a.Ref(), a.SavingPercent)
		}
		if len(a.Reasons) == 0 || a.Details != core.DetailsPath(a.Key()) {
			t.Errorf("%s: reasons %v, details %q", a.Ref(), a.Reasons, a.Details)
		}
		isSibling := a.Reasons[0] == core.ReasonSibling
		if isSibling && sawOther {
			t.Errorf("sibling %s after a non-sibling", a.Ref())
		}
		sawOther = sawOther || !isSibling
		if i > 0 {
			prev := got.Alternatives[i-1]
			if (prev.Reasons[0] == core.ReasonSibling) == isSibling && prev.Value > a.Value {
				t.Errorf("%s (%v) after %s (%v): not ascending", a.Ref(), a.Value, prev.Ref(), prev.Value)
			}
		}
	}
}

// The consultant's question: a C30/37 ready-mix concrete gets its
// climate-improved sibling first, then the other lower ones, all per its
// own unit.
func TestAlternativesSiblingFirst(t *testing.T) {
	svc, nat := realAlternatives(t)
	ctx := context.Background()
	for _, c := range []struct{ id, sibling string }{
		{"6000000032", "6000000033"}, // Fabriksbetong, husbyggnad C30/37 -> klimatförbättrad C30/37
		{"6000000159", "6000000160"}, // Aluminiumprofiler, primär -> skrotbaserad
	} {
		got, err := svc.Alternatives(ctx, core.AlternativesRequest{Ref: "national:" + c.id, Limit: core.MaxAlternatives})
		if err != nil {
			t.Fatal(err)
		}
		checkAlternatives(t, nat, got)
		given := find(t, nat, c.id)
		if got.Unit != compare.Display(given.Unit) || got.Resource.ID != c.id {
			t.Errorf("%s: unit %q resource %s, want its declared unit %q", c.id, got.Unit, got.Resource.ID, given.Unit)
		}
		if len(got.Alternatives) == 0 || got.Alternatives[0].ID != c.sibling || got.Alternatives[0].Reasons[0] != core.ReasonSibling {
			t.Fatalf("%s: first alternative %+v, want the sibling %s", c.id, first(got.Alternatives), c.sibling)
		}
		for _, a := range got.Alternatives[1:] {
			if a.Reasons[0] == core.ReasonSibling && strings.Contains(a.Name, "C25/30") {
				t.Errorf("%s: %s of another strength class counted as a sibling", c.id, a.Ref())
			}
		}
		if got.Considered < got.Lower || got.Lower < len(got.Alternatives) || got.Source == "" {
			t.Errorf("%s: considered %d lower %d listed %d source %q", c.id, got.Considered, got.Lower, len(got.Alternatives), got.Source)
		}
	}
}

func first(as []core.Alternative) any {
	if len(as) == 0 {
		return nil
	}
	return as[0].Ref()
}

// Following the lowest alternative down must end at a resource with
// nothing lower, and the answer says so.
func TestAlternativesSaysWhenNothingIsLower(t *testing.T) {
	svc, nat := realAlternatives(t)
	ctx := context.Background()
	ref := "national:6000000032"
	for range 50 {
		got, err := svc.Alternatives(ctx, core.AlternativesRequest{Ref: ref, Limit: core.MaxAlternatives})
		if err != nil {
			t.Fatal(err)
		}
		checkAlternatives(t, nat, got)
		if got.Lower == 0 {
			if len(got.Alternatives) != 0 || len(got.Notes) == 0 || !strings.HasPrefix(got.Notes[0], "nothing lower") {
				t.Fatalf("%s: nothing lower, but alternatives %d, notes %q", ref, len(got.Alternatives), got.Notes)
			}
			return
		}
		lowest := got.Alternatives[0]
		for _, a := range got.Alternatives {
			if a.Value < lowest.Value {
				lowest = a
			}
		}
		ref = lowest.Ref()
	}
	t.Fatal("the chain of lower alternatives did not end")
}

// Every value is stated in one unit: a requested unit restates them all
// (concrete per m³ through its density), and one the resource cannot be
// stated in is refused.
func TestAlternativesInRequestedUnit(t *testing.T) {
	svc, nat := realAlternatives(t)
	ctx := context.Background()
	concrete := find(t, nat, "6000000032")
	perKg := *concrete.A1A3
	f, ok := compare.Factor(&concrete, "m3")
	if !ok {
		t.Fatalf("concrete has no m³ conversion: %v", concrete.Conversions)
	}
	got, err := svc.Alternatives(ctx, core.AlternativesRequest{Ref: "national:6000000032", Unit: "m3", Limit: core.MaxAlternatives})
	if err != nil {
		t.Fatal(err)
	}
	checkAlternatives(t, nat, got)
	if got.Unit != "m³" || got.Value != perKg*f && (got.Value-perKg*f > 1e-9 || perKg*f-got.Value > 1e-9) {
		t.Errorf("unit %q value %v, want m³ and %v", got.Unit, got.Value, perKg*f)
	}
	if len(got.Alternatives) == 0 || got.Alternatives[0].ID != "6000000033" {
		t.Errorf("per m³ the sibling should still come first: %v", first(got.Alternatives))
	}

	_, err = svc.Alternatives(ctx, core.AlternativesRequest{Ref: "national:6000000032", Unit: "kWh"})
	if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "kWh") {
		t.Errorf("unit kWh for concrete: %v, want invalid naming the unit", err)
	}
	for _, bad := range []core.AlternativesRequest{{Ref: ""}, {Ref: "national:6000000032", Limit: core.MaxAlternatives + 1}} {
		if _, err := svc.Alternatives(ctx, bad); core.KindOf(err) != core.KindInvalid {
			t.Errorf("%+v: %v, want invalid", bad, err)
		}
	}
	if _, err := svc.Alternatives(ctx, core.AlternativesRequest{Ref: "national:1"}); core.KindOf(err) != core.KindNotFound {
		t.Errorf("unknown resource: %v, want not found", err)
	}
}

// Looking in both catalogs adds the Danish rows only when they can be
// stated in the unit; the others are counted in a note, never shown in
// their own unit.
func TestAlternativesAcrossCatalogsKeepOneUnit(t *testing.T) {
	svc, nat := realAlternatives(t)
	all := append(append([]core.Resource(nil), nat...), dkbrRows(t, "#G0701", "#G0530", "#G1075")...)
	got, err := svc.Alternatives(context.Background(), core.AlternativesRequest{
		Ref: "national:6000000032", Catalogs: []core.CatalogID{core.National, core.DKBR}, Limit: core.MaxAlternatives,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkAlternatives(t, all, got)
	if got.Source != core.SourceAll {
		t.Errorf("source %q, want both publishers", got.Source)
	}
}

// BenchmarkAlternatives times one answer over the real national release
// (235 resources): the walk of the catalog, the name search and the
// restating.
func BenchmarkAlternatives(b *testing.B) {
	svc, _ := realAlternatives(b)
	ctx := context.Background()
	refs := []string{"national:6000000032", "national:6000000159", "national:6000000000", "national:6000000225"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := svc.Alternatives(ctx, core.AlternativesRequest{Ref: refs[i%len(refs)]}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
