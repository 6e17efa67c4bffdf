package compare_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/compare"
)

// The resources used below, as the real files publish them. National facts
// are those of 02.07.000 en (Merge takes the newer release's numbers):
//
//	6000000000 Spånskiva / Particle board    kg   0.39 typ, 0.488 cons, A4 0.0629, A5.1 0.055   kg/m³ 700
//	6000000033 Fabriksbetong klimatförb. C30/37 kg 0.0867 typ, 0.108 cons, A4 0.00472, A5.1 0.00339 kg/m³ 2350
//	6000000059 Hålbjälklag, HD/F              kg   0.15 typ, 0.188 cons                            kg/m³ 1350
//	6000000176 Isolerruta, treglas            kg   1.65 typ                                        kg/m² 30
//	6000000203 Solcell, mono-Si               m²   95 typ
//	6000000008 Elektricitet, svensk elmix     kWh  0.037 typ, no A4, no A5.1
//	6000000014 Fjärrvärme                     kWh  0.056 typ
//	6000000010 Diesel MK1 (2024)              MJ   0.0899 typ                                      MJ/liter 35.8
//	6000000012 Bensin MK1 (2024)              MJ   0.0873 typ                                      MJ/liter 31.2
//	6100000001 Träpellets / Wood pellets      MJ   0.0052 typ                                      MJ/kg 17
//
// Danish rows of BR18 Tabel 7 (A1-A3 per declared unit, Masse faktor as kg/<unit>):
//
//	#G0701 Spånplade        M3  -873.594   kg/M3 700
//	#G0530 Solcelleanlæg    M2   296.686   kg/M2 9
//	#G1075 Rude (3-lags)    M2    57.7726  kg/M2 30
func catalog(t *testing.T) *compare.Service {
	t.Helper()
	return newService(t,
		national(t, boverkettest.Export0206SV, boverkettest.Export0207EN),
		dkbrRows(t, "#G0701", "#G0530", "#G1075"))
}

type want struct {
	unit            string
	a, b, delta     float64
	lower           string
	incomparable    bool
	impact          core.Impact
	resolvedA, resB string // refs the sides resolved to
}

func check(t *testing.T, got core.Comparison, w want) {
	t.Helper()
	if w.impact == "" {
		w.impact = core.ImpactTypical
	}
	if got.Unit != w.unit || got.ValueA != w.a || got.ValueB != w.b || got.DeltaA1A3 != w.delta ||
		got.LowerImpactID != w.lower || got.Incomparable != w.incomparable || got.Impact != w.impact {
		t.Errorf("got unit %q a %v b %v delta %v lower %q incomparable %v impact %s\nwant unit %q a %v b %v delta %v lower %q incomparable %v impact %s",
			got.Unit, got.ValueA, got.ValueB, got.DeltaA1A3, got.LowerImpactID, got.Incomparable, got.Impact,
			w.unit, w.a, w.b, w.delta, w.lower, w.incomparable, w.impact)
	}
	if w.resolvedA != "" && got.A.Ref() != w.resolvedA {
		t.Errorf("a resolved to %s, want %s", got.A.Ref(), w.resolvedA)
	}
	if w.resB != "" && got.B.Ref() != w.resB {
		t.Errorf("b resolved to %s, want %s", got.B.Ref(), w.resB)
	}
}

func TestCompareRestatesBothSidesInOneUnit(t *testing.T) {
	svc := catalog(t)
	cases := []struct {
		name string
		req  core.CompareRequest
		want want
	}{
		{
			// Both declared per kg: 0.39 - 0.0867 = 0.3033.
			name: "typical by default in the shared declared unit",
			req:  core.CompareRequest{A: "6000000000", B: "national:6000000033"},
			want: want{unit: "kg", a: 0.39, b: 0.0867, delta: 0.3033, lower: "6000000033", resolvedA: "national:6000000000", resB: "national:6000000033"},
		},
		{
			name: "explicit declared unit changes nothing",
			req:  core.CompareRequest{A: "6000000000", B: "6000000033", Unit: "kg"},
			want: want{unit: "kg", a: 0.39, b: 0.0867, delta: 0.3033, lower: "6000000033"},
		},
		{
			// kg/m³ multiplies: 0.39 × 700 = 273; 0.0867 × 2350 = 203.745;
			// 273 - 203.745 = 69.255.
			name: "explicit m³ through each side's kg/m³",
			req:  core.CompareRequest{A: "6000000000", B: "6000000033", Unit: "m³"},
			want: want{unit: "m³", a: 273, b: 203.745, delta: 69.255, lower: "6000000033"},
		},
		{
			name: "m3 is m³",
			req:  core.CompareRequest{A: "6000000000", B: "6000000033", Unit: " m3 "},
			want: want{unit: "m³", a: 273, b: 203.745, delta: 69.255, lower: "6000000033"},
		},
		{
			// 0.0867 × 2350 ... and the other way round: b is now the lower one.
			name: "sides swapped swap the sign and keep the lower id",
			req:  core.CompareRequest{A: "6000000033", B: "6000000000", Unit: "m3"},
			want: want{unit: "m³", a: 203.745, b: 273, delta: -69.255, lower: "6000000033"},
		},
		{
			// Conservative per m³: 0.108 × 2350 = 253.79999999999998 in
			// float64, 0.188 × 1350 = 253.8. Both are 253.8 kg CO2e/m³:
			// equal, so no lower side and a delta of exactly 0.
			name: "float artefacts rounded: equal values have a zero delta",
			req:  core.CompareRequest{A: "6000000033", B: "6000000059", Unit: "m³", Impact: core.ImpactConservative},
			want: want{unit: "m³", a: 253.8, b: 253.8, delta: 0, lower: "", impact: core.ImpactConservative},
		},
		{
			// 0.488 - 0.108 = 0.38.
			name: "conservative uses a1a3_conservative",
			req:  core.CompareRequest{A: "6000000000", B: "6000000033", Impact: core.ImpactConservative},
			want: want{unit: "kg", a: 0.488, b: 0.108, delta: 0.38, lower: "6000000033", impact: core.ImpactConservative},
		},
		{
			// A4 per m³: 0.0629 × 700 = 44.03; 0.00472 × 2350 = 11.092;
			// 44.03 - 11.092 = 32.938.
			name: "a4 restated in m³",
			req:  core.CompareRequest{A: "6000000000", B: "6000000033", Unit: "m³", Impact: core.ImpactA4},
			want: want{unit: "m³", a: 44.03, b: 11.092, delta: 32.938, lower: "6000000033", impact: core.ImpactA4},
		},
		{
			// 0.055 - 0.00339 = 0.05161.
			name: "a5_1 in kg",
			req:  core.CompareRequest{A: "6000000000", B: "6000000033", Impact: core.ImpactA51},
			want: want{unit: "kg", a: 0.055, b: 0.00339, delta: 0.05161, lower: "6000000033", impact: core.ImpactA51},
		},
		{
			// No unit: glass is per kg, the photovoltaic panel per m²; glass
			// reaches m² through kg/m² 30: 1.65 × 30 = 49.5; 49.5 - 95 = -45.5.
			name: "kg product with kg/m² against an m² product meet in m²",
			req:  core.CompareRequest{A: "6000000176", B: "6000000203"},
			want: want{unit: "m²", a: 49.5, b: 95, delta: -45.5, lower: "6000000176"},
		},
		{
			name: "the same pair swapped picks m² again",
			req:  core.CompareRequest{A: "6000000203", B: "6000000176"},
			want: want{unit: "m²", a: 95, b: 49.5, delta: 45.5, lower: "6000000176"},
		},
		{
			// The Danish particle board is declared per M3 and carries
			// kg/M3 700: <unit>/<declared>, so it divides.
			// -873.594 / 700 = -1.2479914285714286 → -1.24799142857 (12 digits);
			// 0.39 - (-1.24799142857) = 1.63799142857.
			name: "inverse conversion divides",
			req:  core.CompareRequest{A: "6000000000", B: "dkbr:#G0701"},
			want: want{unit: "kg", a: 0.39, b: -1.24799142857, delta: 1.63799142857, lower: "#G0701", resB: "dkbr:#G0701"},
		},
		{
			// 0.39 × 700 = 273 against the declared -873.594; 273 + 873.594 = 1146.594.
			name: "m3 asked, the Danish side is declared M3",
			req:  core.CompareRequest{A: "national:6000000000", B: "br25:#G0701", Unit: "m3"},
			want: want{unit: "m³", a: 273, b: -873.594, delta: 1146.594, lower: "#G0701", resB: "dkbr:#G0701"},
		},
		{
			// Danish triple glazing, 57.7726 per M2 with kg/M2 30:
			// 57.7726 / 30 = 1.9257533333333332 → 1.92575333333;
			// 1.65 - 1.92575333333 = -0.27575333333.
			name: "national kg against Danish M2 meet in kg",
			req:  core.CompareRequest{A: "6000000176", B: "br25:#G1075"},
			want: want{unit: "kg", a: 1.65, b: 1.92575333333, delta: -0.27575333333, lower: "6000000176"},
		},
		{
			// 1.65 × 30 = 49.5 against 57.7726; 49.5 - 57.7726 = -8.2726.
			name: "m2 asked against a declared M2",
			req:  core.CompareRequest{A: "6000000176", B: "#G1075", Unit: "m2"},
			want: want{unit: "m²", a: 49.5, b: 57.7726, delta: -8.2726, lower: "6000000176"},
		},
		{
			// m² and M2 are one unit: 95 - 296.686 = -201.686.
			name: "declared m² and M2 are shared without a unit",
			req:  core.CompareRequest{A: "6000000203", B: "dkbr:#G0530"},
			want: want{unit: "m²", a: 95, b: 296.686, delta: -201.686, lower: "6000000203"},
		},
		{
			// Neither declared unit (MJ, M3) reaches the other, but both reach
			// kg: pellets 0.0052 × 17 = 0.08839999999999999 → 0.0884;
			// 0.0884 - (-1.24799142857) = 1.33639142857.
			name: "a unit neither declares but both reach",
			req:  core.CompareRequest{A: "6100000001", B: "#G0701"},
			want: want{unit: "kg", a: 0.0884, b: -1.24799142857, delta: 1.33639142857, lower: "#G0701"},
		},
		{
			// Diesel 0.0899 × 35.8 = 3.2184199999999996 → 3.21842 per litre;
			// petrol 0.0873 × 31.2 = 2.72376; 3.21842 - 2.72376 = 0.49466.
			name: "fuels per liter through MJ/liter, artefact rounded",
			req:  core.CompareRequest{A: "6000000010", B: "6000000012", Unit: "liter"},
			want: want{unit: "liter", a: 3.21842, b: 2.72376, delta: 0.49466, lower: "6000000012"},
		},
		{
			name: "a resource against itself is equal",
			req:  core.CompareRequest{A: "6000000000", B: "national:6000000000"},
			want: want{unit: "kg", a: 0.39, b: 0.39, delta: 0, lower: ""},
		},
		{
			// kWh and MJ: no declared conversion links them (3.6 MJ/kWh is
			// physics, not the publisher's data), so the answer says so.
			name: "electricity in kWh against diesel in MJ is incomparable",
			req:  core.CompareRequest{A: "6000000008", B: "6000000010"},
			want: want{incomparable: true},
		},
		{
			name: "kg product against district heating is incomparable",
			req:  core.CompareRequest{A: "6000000000", B: "6000000014"},
			want: want{incomparable: true},
		},
		{
			name: "m² product against electricity is incomparable",
			req:  core.CompareRequest{A: "6000000203", B: "6000000008", Impact: core.ImpactConservative},
			want: want{incomparable: true, impact: core.ImpactConservative},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := svc.Compare(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			check(t, got, tc.want)
		})
	}
}

// TestCompareIncomparableKeepsEveryField checks the JSON a client receives:
// every field is present, with the documented zero values.
func TestCompareIncomparableKeepsEveryField(t *testing.T) {
	svc := catalog(t)
	got, err := svc.Compare(context.Background(), core.CompareRequest{A: "6000000008", B: "6000000010"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	wantZero := map[string]any{
		"unit": "", "value_a": 0.0, "value_b": 0.0, "delta_a1a3": 0.0,
		"lower_impact_id": "", "incomparable": true, "impact": "typical",
	}
	for k, v := range wantZero {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for _, k := range []string{"source", "a", "b"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s missing from %s", k, b)
		}
	}
	// The sides are still the full resources, so a client can show why.
	a, _ := m["a"].(map[string]any)
	if a["id"] != "6000000008" || a["unit"] != "kWh" {
		t.Errorf("a = %v", a)
	}
}

func TestCompareRefusesAnExplicitUnitThatCannotApply(t *testing.T) {
	svc := catalog(t)
	cases := []struct {
		name     string
		req      core.CompareRequest
		want     string // substring of the message
		notWant  string
		wantSide string
	}{
		{
			name: "a cannot be stated in m²",
			req:  core.CompareRequest{A: "6000000000", B: "6000000203", Unit: "m²"},
			want: `unit "m²" cannot apply to a (national:6000000000 declared per kg; restatable in kg, m³)`, notWant: "to b",
		},
		{
			name: "b cannot be stated in m3",
			req:  core.CompareRequest{A: "6000000000", B: "6000000203", Unit: "m3"},
			want: `unit "m3" cannot apply to b (national:6000000203 declared per m²; restatable in m²)`, notWant: "to a",
		},
		{
			name: "neither a nor b",
			req:  core.CompareRequest{A: "6000000008", B: "6000000203", Unit: "liter"},
			want: `cannot apply to a (national:6000000008 declared per kWh; restatable in kWh) nor to b (national:6000000203`,
		},
		{
			// Diesel reaches liter only through MJ/liter; the kWh electricity
			// has no conversion to MJ.
			name: "a declared unit of one side is not the other's",
			req:  core.CompareRequest{A: "6000000010", B: "6000000008", Unit: "MJ"},
			want: `cannot apply to b (national:6000000008 declared per kWh`, notWant: "to a",
		},
		{
			// The Danish side is listed with what its conversion reaches.
			name: "Danish side names what it can be restated in",
			req:  core.CompareRequest{A: "6000000203", B: "dkbr:#G0701", Unit: "m2"},
			want: `cannot apply to b (dkbr:#G0701 declared per M3; restatable in M3, kg)`, notWant: "to a",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Compare(context.Background(), tc.req)
			if core.KindOf(err) != core.KindInvalid {
				t.Fatalf("want invalid (400), got %v (kind %d)", err, core.KindOf(err))
			}
			if !strings.Contains(err.Error(), tc.want) || (tc.notWant != "" && strings.Contains(err.Error(), tc.notWant)) {
				t.Fatalf("message %q\nwant it to contain %q and not %q", err, tc.want, tc.notWant)
			}
		})
	}
}

// TestCompareFuelConversionsOf0206NeverApply: up to 02.06 the publisher
// labels the fuels' conversions kg/m² though they are MJ per litre
// (diesel 6000000010: kg/m² 35.4). The numerator (kg) is not the declared
// unit (MJ) and the denominator (m²) is not either, so it restates nothing:
// were it applied, diesel would read 0.0695 × 35.4 = 2.4603 "per m²".
func TestCompareFuelConversionsOf0206NeverApply(t *testing.T) {
	rs := national(t, boverkettest.Export0206SV, "")
	diesel := find(t, rs, "6000000010")
	if diesel.Unit != "MJ" || diesel.Conversions["kg/m²"] != 35.4 {
		t.Fatalf("02.06 diesel is no longer the quirk this test is about: %s %v", diesel.Unit, diesel.Conversions)
	}
	// Every 02.06 energy carrier in MJ is stated in MJ only.
	n := 0
	for _, r := range rs {
		if r.Unit != "MJ" {
			continue
		}
		n++
		if got := compare.Units(&r); !reflect.DeepEqual(got, []string{"MJ"}) {
			t.Errorf("%s %s (conversions %v) restatable in %v, want only MJ", r.ID, r.NameSV, r.Conversions, got)
		}
		for _, u := range []string{"kg", "m²", "m2"} {
			if f, ok := compare.Factor(&r, u); ok {
				t.Errorf("%s restated in %s with factor %v", r.ID, u, f)
			}
		}
	}
	if n != 13 { // 02.06 sv declares 13 resources per MJ
		t.Fatalf("%d MJ resources in 02.06, want 13", n)
	}

	svc := newService(t, rs)
	ctx := context.Background()
	for _, unit := range []string{"m²", "m2", "kg"} {
		_, err := svc.Compare(ctx, core.CompareRequest{A: "6000000010", B: "6000000176", Unit: unit})
		if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "cannot apply to a (national:6000000010 declared per MJ; restatable in MJ)") {
			t.Errorf("unit %s: %v", unit, err)
		}
	}
	// Without a unit the glass (kg, kg/m²) and the fuel share nothing.
	got, err := svc.Compare(ctx, core.CompareRequest{A: "6000000010", B: "6000000176"})
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, want{incomparable: true})

	// 02.07 relabels the same conversion MJ/liter: then it restates.
	diesel07 := find(t, national(t, "", boverkettest.Export0207EN), "6000000010")
	if got := compare.Units(&diesel07); !reflect.DeepEqual(got, []string{"MJ", "liter"}) {
		t.Fatalf("02.07 diesel restatable in %v, want [MJ liter]", got)
	}
}

func TestCompareMissingImpactValueNamesSideAndField(t *testing.T) {
	svc := catalog(t)
	cases := []struct {
		name string
		req  core.CompareRequest
		want string
	}{
		{"a4 of electricity on side a",
			core.CompareRequest{A: "6000000008", B: "6000000000", Impact: core.ImpactA4},
			"a (national:6000000008) does not publish a4"},
		{"a4 of electricity on side b",
			core.CompareRequest{A: "6000000000", B: "6000000008", Impact: core.ImpactA4},
			"b (national:6000000008) does not publish a4"},
		{"a5_1 of two energy carriers",
			core.CompareRequest{A: "6000000008", B: "6000000010", Impact: core.ImpactA51},
			"neither a (national:6000000008) nor b (national:6000000010) publishes a5_1"},
		{"the Danish table has no conservative value",
			core.CompareRequest{A: "6000000000", B: "dkbr:#G0701", Impact: core.ImpactConservative},
			"b (dkbr:#G0701) does not publish a1a3_conservative"},
		{"a missing value is refused even with a unit that would apply",
			core.CompareRequest{A: "6000000008", B: "6000000014", Unit: "kWh", Impact: core.ImpactA4},
			"neither a (national:6000000008) nor b (national:6000000014) publishes a4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Compare(context.Background(), tc.req)
			if core.KindOf(err) != core.KindInvalid || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (kind %d), want invalid containing %q", err, core.KindOf(err), tc.want)
			}
		})
	}
}

func TestCompareLookupErrorsNameTheSide(t *testing.T) {
	rs := national(t, boverkettest.Export0206SV, boverkettest.Export0207EN)
	// dkbr is loaded from operator batches whose ids are free: one keyed by
	// the Swedish particle board's id makes the bare id ambiguous.
	clash := dkbrRows(t, "#G0701")
	clash[0].ID = "6000000000"
	svc := newService(t, rs, clash)
	cases := []struct {
		name       string
		req        core.CompareRequest
		kind       core.ErrorKind
		prefix     string
		contains   string
		candidates []core.CatalogID
	}{
		{"unknown id on a", core.CompareRequest{A: "national:999", B: "6000000033"}, core.KindNotFound, "a: ", "no resource national:999", nil},
		{"unknown bare id on b", core.CompareRequest{A: "6000000033", B: "999"}, core.KindNotFound, "b: ", `no resource "999" in any catalog`, nil},
		{"unknown catalog on a", core.CompareRequest{A: "se:6000000033", B: "6000000033"}, core.KindInvalid, "a: ", `unknown catalog "se"`, nil},
		{"id the catalog does not hold", core.CompareRequest{A: "6000000033", B: "br25:6000000033"}, core.KindNotFound, "b: ", "no resource dkbr:6000000033", nil},
		{"ambiguous bare id on a", core.CompareRequest{A: "6000000000", B: "6000000033"}, core.KindConflict, "a: ", `id "6000000000" exists in catalogs national and dkbr`, []core.CatalogID{core.National, core.DKBR}},
		{"ambiguous bare id on b", core.CompareRequest{A: "6000000033", B: " 6000000000 "}, core.KindConflict, "b: ", "national:6000000000, dkbr:6000000000", []core.CatalogID{core.National, core.DKBR}},
		{"empty b", core.CompareRequest{A: "6000000033", B: "  "}, core.KindInvalid, "", "both a and b are required", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Compare(context.Background(), tc.req)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Kind != tc.kind {
				t.Fatalf("got %v (kind %d), want kind %d", err, core.KindOf(err), tc.kind)
			}
			if !strings.HasPrefix(err.Error(), tc.prefix) || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("message %q, want prefix %q and %q", err, tc.prefix, tc.contains)
			}
			if !reflect.DeepEqual(ce.Candidates, tc.candidates) {
				t.Fatalf("candidates %v, want %v", ce.Candidates, tc.candidates)
			}
		})
	}
	// Prefixed, both sides of the clash resolve.
	got, err := svc.Compare(context.Background(), core.CompareRequest{A: "national:6000000000", B: "dkbr:6000000000"})
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, want{unit: "kg", a: 0.39, b: -1.24799142857, delta: 1.63799142857, lower: "6000000000",
		resolvedA: "national:6000000000", resB: "dkbr:6000000000"})
}

func TestCompareLocalizesAndAttributes(t *testing.T) {
	svc := catalog(t)
	ctx := context.Background()
	got, err := svc.Compare(ctx, core.CompareRequest{A: "6000000000", B: "#G0701", Lang: core.English})
	if err != nil {
		t.Fatal(err)
	}
	// English name of the Swedish product; the Danish row has only Danish.
	if got.A.Name != "Particle board" || got.B.Name != "Spånplade" || got.Source != core.SourceAll {
		t.Fatalf("names %q / %q, source %q", got.A.Name, got.B.Name, got.Source)
	}
	if got.A.A1A3 == nil || *got.A.A1A3 != 0.39 || got.A.Unit != "kg" || got.A.Conversions["kg/m³"] != 700 {
		t.Fatalf("a is not the full resource: %+v", got.A)
	}
	got, err = svc.Compare(ctx, core.CompareRequest{A: "6000000000", B: "6000000033", Lang: core.Swedish})
	if err != nil {
		t.Fatal(err)
	}
	if got.A.Name != "Spånskiva" || got.B.Name != "Fabriksbetong, husbyggnad klimatförbättrad C30/37" ||
		got.Source != core.SourceFor([]core.CatalogID{core.National}) {
		t.Fatalf("names %q / %q, source %q", got.A.Name, got.B.Name, got.Source)
	}
}
