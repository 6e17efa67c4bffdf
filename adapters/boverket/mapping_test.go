package boverket_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
)

func decode(t *testing.T, name string) *boverket.Export {
	t.Helper()
	e, err := boverket.DecodeExport(boverkettest.LoadExport(t, name))
	if err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return e
}

func byID(rs []core.Resource) map[string]core.Resource {
	m := make(map[string]core.Resource, len(rs))
	for _, r := range rs {
		m[r.ID] = r
	}
	return m
}

// diffResource names every field that differs, with both values.
func diffResource(got, want core.Resource) []string {
	var out []string
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < gv.NumField(); i++ {
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if !reflect.DeepEqual(g, w) {
			out = append(out, fmt.Sprintf("%s: got %s, want %s", gv.Type().Field(i).Name, show(g), show(w)))
		}
	}
	return out
}

func show(v any) string {
	if p, ok := v.(*float64); ok {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%#v", v)
}

// Expected values read from the real files (02.06.000 sv, 02.07.000 en) and
// written out by hand: the mapping is checked against the data, not against
// itself. Facts come from 02.07 (the newer release), Swedish texts from 02.06.
var want0206sv0207en = []core.Resource{
	{
		ID: "6000000000", Catalog: core.National, Source: core.SourceNational,
		NameSV: "Spånskiva", NameEN: "Particle board",
		DescriptionSV:   "Spånskivor är gjorda av träspån och lim som pressats samman. Mängden lim är mindre än 10 %. Biprodukter från tillverkning av sågat virke används vid tillverkning av spånskivor. Densiteter varierar mellan 650 och 750 kg/m³.",
		ApplicabilitySV: "Standard spånskiva används vanligtvis som ytmaterial i en skyddad miljö, dvs. vanligtvis inomhus",
		Synonyms:        "Spånskivor, skivor",
		DescriptionEN:   "Chipboards are made of wood chips and resin pressed together. The amount of glue is about 10 %. By-products from the manufaturing of sawn timber are utilised in the production of chipboards. Densities vary between 650 and 750 kg/m³.",
		ApplicabilityEN: "Standard particle board is typically used as surface material in a protected environment, typically indoors.",
		SynonymsEN:      "Chipboard",
		A1A3:            core.F(0.39), A1A3Conservative: core.F(0.488), A4: core.F(0.0629), A51: core.F(0.055), GWPUnit: "kg CO2 eq./kg",
		ConservativeFactor: core.F(1.25), WasteFactor: core.F(1.1), BiogenicCarbon: core.F(0.42),
		ServiceLife: ">50 år",
		Transports: []core.Transport{
			{Name: "Närdistribution", DistanceKm: 40, Type: "Lastbil", Fuel: "Diesel, reduktionsplikt (2023)", FuelResourceID: "6000000010"},
			{Name: "Fabrik till återförsäljare/lager", DistanceKm: 600, Type: "Lastbil", Fuel: "Diesel, reduktionsplikt (2023)", FuelResourceID: "6000000010"},
		},
		Unit:         "kg",
		Conversions:  map[string]float64{"kg/m³": 700},
		Category:     "Byggskivor",
		CategoryEN:   "Building boards",
		CategoryCode: "10",
		BK04:         "01208 Spånskivor",
		Version:      "02.07.000",
	},
	{ // an energy carrier: no A4, A5.1, transports or conversions; 02.07 drops its biogenic carbon
		ID: "6000000008", Catalog: core.National, Source: core.SourceNational,
		NameSV: "Elektricitet, svensk elmix", NameEN: "Electricity, Swedish mix",
		DescriptionSV:   "Beräkningarna är utförda i LCA-verktyget Gabi och uppströms LCA-data för el, baserat på processer som är representativa för de anläggningar som finns i Sverige. Miljöpåverkan beräknas som årlig produktion med hänsyn taget till import och export. Det gör att utsläppen skiljer sig mellan åren, varför det är vanligt att rekommendera ett flytande tre års medelvärde för denna typ av processer.",
		ApplicabilitySV: "El köps från elnätet för flera olika ändamål.",
		Synonyms:        "El, elmix",
		DescriptionEN:   "The calculations are performed in the LCA tool Gabi and upstream LCA data for electricity based on processes representative of the facilities in Sweden. The environmental impact is calculated as annual production and imports/exports, which means that emissions differ between the years, which is why it is common to recommend a floating three-year average for this type of process.",
		ApplicabilityEN: "Electricity is purchased from the electricity grid for several purposes.",
		SynonymsEN:      "Grid electricity",
		A1A3:            core.F(0.037), A1A3Conservative: core.F(0.037), GWPUnit: "kg CO2 eq./kWh",
		ConservativeFactor: core.F(1), WasteFactor: core.F(1),
		ServiceLife:  "Inte relevant",
		Unit:         "kWh",
		Category:     "Energi och bränsle",
		CategoryEN:   "Energy and fuel",
		CategoryCode: "3",
		BK04:         "195 Elektricitet",
		Version:      "02.07.000",
	},
	{ // declared per m²
		ID: "6000000203", Catalog: core.National, Source: core.SourceNational,
		NameSV: "Solcell, mono-Si", NameEN: "Photovoltaic cells, mono-Si",
		DescriptionSV:   "Data är representativa för solceller typ mono-Si och är ett generiskt exemplvärde på det som finns på marknaden.",
		ApplicabilitySV: "En solcell, eller solpanel, är en elektrisk anordning som omvandlar ljusets energi direkt till elektricitet genom den fotovoltaiska effekten, som är ett fysiskt och kemiskt fenomen.",
		Synonyms:        "Solpanel",
		DescriptionEN:   "Data is representative for a photovoltaic cell type mono-Si and are a generic example value of what is on the market.",
		ApplicabilityEN: "A solar cell, or photovoltaic cell, is an electrical device that converts the energy of light directly into electricity by the photovoltaic effect, which is a physical and chemical phenomenon.",
		SynonymsEN:      "Solar cell",
		A1A3:            core.F(95), A1A3Conservative: core.F(119), A4: core.F(0.144), A51: core.F(0), GWPUnit: "kg CO2 eq./m²",
		ConservativeFactor: core.F(1.25), WasteFactor: core.F(1),
		ServiceLife: "30 år",
		Transports: []core.Transport{
			{Name: "Närdistribution", DistanceKm: 40, Type: "Lastbil", Fuel: "Diesel, reduktionsplikt (2023)", FuelResourceID: "6000000010"},
			{Name: "Fabrik till återförsäljare/lager", DistanceKm: 1500, Type: "Lastbil", Fuel: "Diesel, reduktionsplikt (2023)", FuelResourceID: "6000000010"},
		},
		Unit:         "m²",
		Category:     "Murblock och tegel",
		CategoryEN:   "Blocks and tiles",
		CategoryCode: "9",
		BK04:         "183 Elinstallationsmaterial",
		Version:      "02.07.000",
	},
	{ // a fuel: 02.07 labels its conversion MJ/liter (02.06 had the kg/m² quirk)
		ID: "6000000010", Catalog: core.National, Source: core.SourceNational,
		NameSV: "Diesel, reduktionsplikt (2023)", NameEN: "Diesel MK1, reduction obligation (2024)",
		DescriptionSV:   "Vid beräkningen av växthusgasutsläpp enligt reduktionsplikten utgår man ifrån de standardvärden för de fossila drivmedlen som fastställts i ett tilläggsdirektiv till bränslekvalitetsdirektivet 2015/652/EU och en inblandning av förnybart. Dessa värden är:\n• Bensin 93,3 g CO₂e/MJ\n• Diesel 95,1 g CO₂e/MJ\n• HVO 6,2 g CO₂e/MJ som biokomponent för reduktionspliktiga drivmedel år 2021 (ER2022:08) \n• FAME 22,9 g CO₂e/MJ som biokomponent för reduktionspliktiga drivmedel år 2021 (ER2022:08)",
		ApplicabilitySV: "Diesel köps och förbränns i olika maskiner och fordon, dvs omfattar WtW (Well to Wheel)",
		Synonyms:        "Reduktionspliktsdiesel",
		// The export has two zero-width spaces in "values ​​for"; Normalize drops them.
		DescriptionEN:   "The calculation of greenhouse gas emissions according to the reduction obligation is based on the standard values for the fossil fuels established in an additional directive to the fuel quality directive 2015/652/EU and a mixture of renewables.",
		ApplicabilityEN: "Diesel is purchased and burned in various machines and vehicles, i.e. a WtW (Well to Wheel) scope.",
		SynonymsEN:      "Reduction obligation diesel",
		A1A3:            core.F(0.0899), A1A3Conservative: core.F(0.0899), GWPUnit: "kg CO2 eq./MJ",
		ConservativeFactor: core.F(1), WasteFactor: core.F(1),
		ServiceLife:  "Inte relevant",
		Unit:         "MJ",
		Conversions:  map[string]float64{"MJ/liter": 35.8},
		Category:     "Energi och bränsle",
		CategoryEN:   "Energy and fuel",
		CategoryCode: "3",
		BK04:         "19201 Bränsle",
		Version:      "02.07.000",
	},
	{ // Swedish only (gone from 02.07): its code comes from the 02.06 tree
		ID: "6000000169", Catalog: core.National, Source: core.SourceNational,
		NameSV: "Formskiva", NameEN: "Plywood, phenol coated",
		DescriptionSV:   "Data gäller för plywood av björk och lim med <10 %. Densiteten mellan olika tillverkare varierar +/-5 %.",
		ApplicabilitySV: "Skivan är främst avsedd att användas utomhus till enklare formgjutning, skydd, avskärmning, emballage eller beklädnad (t ex i lantbruksbyggnader, lagerinredning,\r\nfordonsinredningar, etc. Vid varsam användning kan skivan återanvändas till formgjutning 1-3 gånger.",
		Synonyms:        "Formplyfa, formplywood",
		A1A3:            core.F(0.644), A1A3Conservative: core.F(0.805), A4: core.F(0.0626), A51: core.F(0.0868), GWPUnit: "kg CO2 eq./kg",
		ConservativeFactor: core.F(1.25), WasteFactor: core.F(1.1), BiogenicCarbon: core.F(0.44),
		ServiceLife: ">50 år",
		Transports: []core.Transport{
			{Name: "Närdistribution", DistanceKm: 40, Type: "Lastbil", Fuel: "Diesel, reduktionsplikt (2023)", FuelResourceID: "6000000010"},
			{Name: "Fabrik till återförsäljare/lager", DistanceKm: 800, Type: "Lastbil", Fuel: "Diesel, reduktionsplikt (2023)", FuelResourceID: "6000000010"},
		},
		Unit:         "kg",
		Conversions:  map[string]float64{"kg/m³": 680},
		Category:     "Byggskivor",
		CategoryCode: "9",
		BK04:         "01206 Byggplywood",
		Version:      "02.06.000",
	},
	{ // English only (new in 02.07)
		ID: "6100000013", Catalog: core.National, Source: core.SourceNational,
		NameSV: "Träbriketter", NameEN: "Wood briquettes",
		DescriptionEN:   "Climate impact from wood briquettes is calculated for the entire fuel life cycle from source to use (Jenny Gode et al: Environmental Factbook 2011: Estimated emission factors for fuels, electricity, heat and transport, report 1183, Värmeforsk, Stockholm).",
		ApplicabilityEN: "Wood briquettes are compact logs produced by compressing wood byproducts, offering an excellent alternative to traditional firewood. They can be made from hardwood, softwood, or a combination of both types of wood.",
		A1A3:            core.F(0.0058), A1A3Conservative: core.F(0.0058), GWPUnit: "kg CO2 eq./MJ",
		ConservativeFactor: core.F(1), WasteFactor: core.F(1),
		ServiceLife:  "Not relevant",
		Unit:         "MJ",
		Conversions:  map[string]float64{"MJ/kg": 16.8},
		CategoryEN:   "Energy and fuel",
		CategoryCode: "3",
		BK04:         "19203 Wood briquettes",
		Version:      "02.07.000",
	},
	{ // ten Boverket categories in 02.06 (the first counts), the new leaf 15 in 02.07
		ID: "6000000174", Catalog: core.National, Source: core.SourceNational,
		NameSV: "Återanvänd byggprodukt", NameEN: "Reused construction product",
		DescriptionSV:   "Inga begränsningar",
		ApplicabilitySV: "Återanvändning av en produkt som inte kräver någon uppgradering, eller om det krävs så ingår det i andra delar av resurssammanställningen som används för bedömningen av byggnadsverket.",
		Synonyms:        "Återbruk, återbrukad produkt",
		ApplicabilityEN: "Reuse of a product that does not require an upgrade, or if required, is included in other parts of the bill of resources used in the assessment of the construction works.",
		A1A3:            core.F(0), A1A3Conservative: core.F(0), A4: core.F(0.00539), A51: core.F(0), GWPUnit: "kg CO2 eq./kg",
		ConservativeFactor: core.F(1.25), WasteFactor: core.F(1), BiogenicCarbon: core.F(0),
		ServiceLife: "Inte relevant",
		Transports: []core.Transport{
			{Name: "Fabrik till byggarbetsplats", DistanceKm: 40, Type: "Lastbil", Fuel: "Diesel, reduktionsplikt (2023)", FuelResourceID: "6000000010"},
		},
		Unit:         "kg",
		Category:     "Färg och fog",
		CategoryEN:   "Reused building products",
		CategoryCode: "15",
		BK04:         "01 Byggmaterial",
		Version:      "02.07.000",
	},
}

func TestMergeRealResourcesFieldByField(t *testing.T) {
	t.Parallel()
	m := boverket.Merge(decode(t, boverkettest.Export0206SV), decode(t, boverkettest.Export0207EN))
	got := byID(m.Resources)
	for _, want := range want0206sv0207en {
		r, ok := got[want.ID]
		if !ok {
			t.Errorf("%s missing", want.ID)
			continue
		}
		for _, d := range diffResource(r, want) {
			t.Errorf("%s %s", want.ID, d)
		}
	}
}

func TestMergeCounts0206sv0207en(t *testing.T) {
	t.Parallel()
	sv, en := decode(t, boverkettest.Export0206SV), decode(t, boverkettest.Export0207EN)
	m := boverket.Merge(sv, en)
	if len(m.Resources) != 235 { // 223 shared + 7 English only + 5 Swedish only
		t.Fatalf("merged %d resources, want 235", len(m.Resources))
	}
	if m.Rejected != 0 || m.Version != "02.07.000" {
		t.Errorf("rejected %d version %q, want 0 and 02.07.000", m.Rejected, m.Version)
	}
	for i := 1; i < len(m.Resources); i++ {
		if m.Resources[i-1].ID >= m.Resources[i].ID {
			t.Fatalf("not sorted by id at %d: %s, %s", i, m.Resources[i-1].ID, m.Resources[i].ID)
		}
	}
	got := byID(m.Resources)
	for _, id := range []string{"6000000157", "6000000164", "6000000165", "6000000166", "6000000169"} {
		r := got[id]
		if r.NameSV == "" || r.DescriptionSV == "" || r.Category == "" || r.A1A3 == nil || r.CategoryCode == "" {
			t.Errorf("Swedish-only %s lost fields: %+v", id, r)
		}
		if r.DescriptionEN != "" || r.CategoryEN != "" || r.Version != "02.06.000" {
			t.Errorf("Swedish-only %s has English fields or a wrong version: %q %q %q", id, r.DescriptionEN, r.CategoryEN, r.Version)
		}
	}
	for i := 8; i <= 14; i++ {
		id := fmt.Sprintf("61000000%02d", i)
		r := got[id]
		if r.NameEN == "" || r.NameSV == "" || r.CategoryEN == "" || r.A1A3 == nil || r.CategoryCode != "3" {
			t.Errorf("English-only %s lost fields: %+v", id, r)
		}
		if r.DescriptionSV != "" || r.Category != "" || r.Synonyms != "" {
			t.Errorf("English-only %s has Swedish texts: %q %q %q", id, r.DescriptionSV, r.Category, r.Synonyms)
		}
	}
	// Every resource in both cultures is bilingual, attributed and clean.
	for _, r := range m.Resources {
		if r.Catalog != core.National || r.Source != core.SourceNational || r.GWPUnit == "" || r.Unit == "" {
			t.Errorf("%s: catalog %q source %q gwp unit %q unit %q", r.ID, r.Catalog, r.Source, r.GWPUnit, r.Unit)
		}
		if r.NameSV != strings.TrimSpace(r.NameSV) || strings.ContainsAny(r.DescriptionEN+r.DescriptionSV, "\u200b\u00ad") {
			t.Errorf("%s: text not normalized: %q", r.ID, r.NameSV)
		}
	}
	if n := got["6000000220"].NameSV; n != "Färdigblandad fyllnadsbruk (för håldäck mm)" {
		t.Errorf("stray leading space kept: %q", n)
	}
}

func TestCategoryCodeFromTree0206Alone(t *testing.T) {
	t.Parallel()
	m := boverket.Merge(decode(t, boverkettest.Export0206SV), nil)
	if len(m.Resources) != 228 || m.Version != "02.06.000" {
		t.Fatalf("%d resources version %q, want 228 and 02.06.000", len(m.Resources), m.Version)
	}
	got := byID(m.Resources)
	for id, code := range map[string]string{
		"6000000000": "9", // Byggskivor
		"6000000008": "2", // Energi och bränsle
		"6000000203": "8", // Murblock och tegel
		"6000000174": "4", // Färg och fog, the first of its ten categories
		"6000000169": "9",
	} {
		if c := got[id].CategoryCode; c != code {
			t.Errorf("%s (%s): code %q, want %q", id, got[id].Category, c, code)
		}
	}
	for _, r := range m.Resources {
		if r.CategoryCode == "" {
			t.Errorf("%s: category %q not found in the tree", r.ID, r.Category)
		}
		if r.CategoryEN != "" || r.DescriptionEN != "" || r.NameEN == "" {
			t.Errorf("%s: Swedish export alone gave English texts %q %q or lost the Names.EN %q", r.ID, r.CategoryEN, r.DescriptionEN, r.NameEN)
		}
	}
	if r := got["6000000010"]; r.Conversions["kg/m²"] != 35.4 {
		t.Errorf("02.06 fuel quirk not kept as published: %v", r.Conversions)
	}
}

func TestCategoryCodeFromResource0207Alone(t *testing.T) {
	t.Parallel()
	m := boverket.Merge(nil, decode(t, boverkettest.Export0207EN))
	if len(m.Resources) != 230 {
		t.Fatalf("%d resources, want 230", len(m.Resources))
	}
	got := byID(m.Resources)
	for id, code := range map[string]string{"6000000000": "10", "6000000008": "3", "6000000203": "9", "6000000174": "15"} {
		if c := got[id].CategoryCode; c != code {
			t.Errorf("%s (%s): code %q, want %q", id, got[id].CategoryEN, c, code)
		}
	}
}

// 02.04 is English and has no codes on resources: the English tree is used.
func TestCategoryCodeFromEnglishTree0204(t *testing.T) {
	t.Parallel()
	m := boverket.Merge(nil, decode(t, boverkettest.Export0204EN))
	got := byID(m.Resources)
	if r := got["6000000000"]; r.CategoryEN != "Building boards" || r.CategoryCode != "9" {
		t.Errorf("6000000000: %q %q, want Building boards 9", r.CategoryEN, r.CategoryCode)
	}
	for _, r := range m.Resources {
		if r.CategoryCode == "" {
			t.Errorf("%s: category %q not found in the tree", r.ID, r.CategoryEN)
		}
	}
}

func TestMergeRejectsRowsWithoutIDOrTypicalValue(t *testing.T) {
	t.Parallel()
	drop := func(rs []map[string]any) []map[string]any {
		for _, r := range rs {
			switch boverkettest.ResourceID(r) {
			case "6000000001":
				delete(r, "ResourceId")
			case "6000000002":
				items := r["DataItems"].([]any)
				di := items[0].(map[string]any)
				var keep []any
				for _, v := range di["DataValueItems"].([]any) {
					if v.(map[string]any)["DataModuleCode"] != "A1-A3 Typical" {
						keep = append(keep, v)
					}
				}
				di["DataValueItems"] = keep
			}
		}
		return rs
	}
	sv := boverkettest.MutateExport(t, boverkettest.LoadExport(t, boverkettest.Export0206SV), drop, "")
	e, err := boverket.DecodeExport(sv)
	if err != nil {
		t.Fatal(err)
	}
	m := boverket.Merge(e, nil)
	if len(m.Resources) != 226 || m.Rejected != 2 {
		t.Errorf("%d resources, %d rejected; want 226 and 2", len(m.Resources), m.Rejected)
	}
	got := byID(m.Resources)
	if _, ok := got["6000000002"]; ok {
		t.Error("a resource without an A1-A3 typical value was kept")
	}
	// With the English export still carrying the value, the id is kept with
	// the English (newer) facts; only the id-less Swedish row is rejected.
	m = boverket.Merge(e, decode(t, boverkettest.Export0207EN))
	if r, ok := byID(m.Resources)["6000000002"]; !ok || r.A1A3 == nil || m.Rejected != 1 {
		t.Errorf("6000000002 with an English value: found %v, rejected %d", ok, m.Rejected)
	}
}

// A release that only bumps its version string changes no content hash.
func TestVersionOnlyBumpKeepsContent(t *testing.T) {
	t.Parallel()
	raw := boverkettest.LoadExport(t, boverkettest.Export0206SV)
	before := boverket.Merge(decode(t, boverkettest.Export0206SV), nil)
	bumped, err := boverket.DecodeExport(boverkettest.MutateExport(t, raw, nil, "02.06.001"))
	if err != nil {
		t.Fatal(err)
	}
	after := boverket.Merge(bumped, nil)
	if after.Version != "02.06.001" || len(after.Resources) != len(before.Resources) {
		t.Fatalf("version %q, %d resources", after.Version, len(after.Resources))
	}
	for i := range after.Resources {
		if after.Resources[i].Version != "02.06.001" {
			t.Fatalf("%s: version %q", after.Resources[i].ID, after.Resources[i].Version)
		}
		if core.ContentHash(&after.Resources[i]) != core.ContentHash(&before.Resources[i]) {
			t.Errorf("%s: content hash changed on a version-only bump", after.Resources[i].ID)
		}
	}
}
