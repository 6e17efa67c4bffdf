package core

import (
	"strings"
	"testing"
)

func sample() Resource {
	return Resource{
		ID: "6000000000", Catalog: National, NameSV: "Spånskiva", NameEN: "Particle board",
		DescriptionSV: "Spånskivor är gjorda av träspån", Synonyms: "Spånskivor, skivor",
		A1A3: F(0.39), A1A3Conservative: F(0.488), A4: F(0.0487), A51: F(0.0536),
		GWPUnit: "kg CO2 eq./kg", Unit: "kg", Conversions: map[string]float64{"kg/m³": 700, "kg/m²": 11},
		Category: "Byggskivor", CategoryCode: "9", Version: "02.06.000", Source: SourceNational,
		Origin:     "https://klimatdatabasen.boverket.se/detaljer/9/6000000000",
		Transports: []Transport{{Name: "Närdistribution", DistanceKm: 40, Type: "Lastbil"}},
	}
}

func TestContentHashIgnoresIdsVersionAndLinks(t *testing.T) {
	a := sample()
	b := sample()
	b.ID, b.Catalog, b.Version, b.Origin, b.CategoryCode, b.Source, b.Withdrawn = "x", DKBR, "02.07.000", "", "10", "other", true
	b.Name, b.Description = "shown", "shown"
	if ContentHash(&a) != ContentHash(&b) {
		t.Fatal("a version-only bump (or a new product-sheet link) must not change the content hash")
	}
}

func TestContentHashSeesEveryContentField(t *testing.T) {
	base := sample()
	h := ContentHash(&base)
	edits := map[string]func(r *Resource){
		"name_sv":      func(r *Resource) { r.NameSV = "Spånskiva X" },
		"name_en":      func(r *Resource) { r.NameEN = "Chipboard" },
		"name_de":      func(r *Resource) { r.NameDE = "Spanplatte" },
		"description":  func(r *Resource) { r.DescriptionSV += "." },
		"synonyms":     func(r *Resource) { r.Synonyms = "skivor" },
		"a1a3":         func(r *Resource) { r.A1A3 = F(0.4) },
		"a1a3 removed": func(r *Resource) { r.A1A3 = nil },
		"a4":           func(r *Resource) { r.A4 = F(0.05) },
		"a5_1 removed": func(r *Resource) { r.A51 = nil },
		"unit":         func(r *Resource) { r.Unit = "m3" },
		"gwp_unit":     func(r *Resource) { r.GWPUnit = "kg CO2 eq./m3" },
		"conversion":   func(r *Resource) { r.Conversions["kg/m³"] = 701 },
		"category":     func(r *Resource) { r.Category = "Trävaror" },
		"transport":    func(r *Resource) { r.Transports[0].DistanceKm = 50 },
		"waste factor": func(r *Resource) { r.WasteFactor = F(1.1) },
		"service life": func(r *Resource) { r.ServiceLife = ">50 år" },
	}
	for name, edit := range edits {
		r := sample().Clone()
		edit(&r)
		if ContentHash(&r) == h {
			t.Errorf("changing %s left the content hash unchanged", name)
		}
	}
}

func TestContentHashIndependentOfMapOrderAndSpacing(t *testing.T) {
	a := sample()
	b := sample()
	b.Conversions = map[string]float64{"kg/m²": 11, "kg/m³": 700}
	b.NameSV = "  Spånskiva\u200b "
	b.Normalize()
	if ContentHash(&a) != ContentHash(&b) {
		t.Fatal("hash must not depend on map order, stray spaces or invisible characters")
	}
}

func TestParseCatalogAliases(t *testing.T) {
	for in, want := range map[string]CatalogID{"national": National, "dkbr": DKBR, "br25": DKBR, " BR25 ": DKBR} {
		got, err := ParseCatalog(in)
		if err != nil || got != want {
			t.Errorf("ParseCatalog(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseCatalog("boverket"); KindOf(err) != KindInvalid {
		t.Errorf("unknown catalog must be invalid, got %v", err)
	}
	cs, err := ParseCatalogList("dkbr,br25,national")
	if err != nil || len(cs) != 2 || cs[0] != DKBR || cs[1] != National {
		t.Errorf("ParseCatalogList collapses aliases: got %v, %v", cs, err)
	}
}

// TestContentHashStable: the hash of a resource without a German name is
// the one stored before name_de existed (computed by that code), so adding
// the field did not make every stored resource look changed.
func TestContentHashStable(t *testing.T) {
	r := sample()
	if got, want := ContentHash(&r), "9e092ca226a3c491c51ed8331777535ff20db601bba1fcdb2f0f7a57c1fc04ee"; got != want {
		t.Fatalf("hash %s, want %s", got, want)
	}
}

func TestLocalizeFallsBack(t *testing.T) {
	r := Resource{NameSV: "Spånskiva", NameEN: "", DescriptionEN: "Particle boards are made"}
	r.Localize(English)
	if r.Name != "Spånskiva" || r.NameLang != "sv" || r.Description != "Particle boards are made" || r.DescriptionLang != "en" {
		t.Fatalf("English view falls back to Swedish and says so: %+v", r)
	}
	d := Resource{Catalog: DKBR, NameEN: "Concrete", NameDA: "Beton"}
	d.Localize(Swedish)
	if d.Name != "Beton" || d.NameLang != "da" {
		t.Fatalf("Swedish view of a Danish row shows the Danish name first, got %q (%s)", d.Name, d.NameLang)
	}
	d.Localize(English)
	if d.Name != "Concrete" || d.NameLang != "en" || d.Description != "" || d.DescriptionLang != "" {
		t.Fatalf("English view of a row with an English name: %q (%s), description %q (%s)", d.Name, d.NameLang, d.Description, d.DescriptionLang)
	}
}

// TestLocalizeNeverShowsGermanAsEnglish: a Tabel 7 #G row has a Danish and
// a German name; lang=en shows the Danish one and says it is Danish.
func TestLocalizeNeverShowsGermanAsEnglish(t *testing.T) {
	r := Resource{Catalog: DKBR, ID: "#G0740", NameDA: "Betonrør, armeret", NameDE: "Betonrohr, bewehrt"}
	for _, lang := range []Lang{English, Swedish} {
		r.Localize(lang)
		if r.Name != "Betonrør, armeret" || r.NameLang != "da" {
			t.Errorf("lang=%s: name %q (%s), want the Danish name labelled da", lang, r.Name, r.NameLang)
		}
	}
	// Only a German name: shown, and labelled German.
	g := Resource{Catalog: DKBR, ID: "x", NameDE: "Betonrohr"}
	g.Localize(English)
	if g.Name != "Betonrohr" || g.NameLang != "de" {
		t.Errorf("German-only row: %q (%s)", g.Name, g.NameLang)
	}
}

// TestInvisibleLeads: every invisible character begins with a byte of
// invisibleLeads, or CleanText would skip the replacer for a text holding it.
func TestInvisibleLeads(t *testing.T) {
	for _, r := range invisibleRunes {
		if !strings.Contains(invisibleLeads, string(r)[:1]) {
			t.Errorf("%U begins with %#x, not among invisibleLeads", r, string(r)[0])
		}
	}
}

// TestCleanTextRemovesInvisibles: each invisible character goes, alone, among
// other non-ASCII letters, and at the edges; visible text stays as it is.
func TestCleanTextRemovesInvisibles(t *testing.T) {
	for _, r := range invisibleRunes {
		for _, c := range []struct{ in, want string }{
			{"glas" + string(r) + "ull", "glasull"},
			{" Träull" + string(r) + "skiva – 12 €  ", "Träullskiva – 12 €"},
			{string(r) + " æble ", "æble"},
		} {
			if got := CleanText(c.in); got != c.want {
				t.Errorf("CleanText(%q) = %q, want %q", c.in, got, c.want)
			}
		}
	}
	for _, s := range []string{"Spånskiva", "Beton – C30/37", "Mineralull 35 kg/m³", "plain"} {
		if got := CleanText("  " + s + "\n"); got != s {
			t.Errorf("CleanText(%q) = %q", s, got)
		}
	}
}
