// Package core holds the domain of climatesearch: catalogs of construction
// resources with climate-impact values, and what users ask of them. It imports
// only the standard library; the services that act on the domain live in the
// sub-packages (search, compare, ingest, lookup) and reach the outside world
// through the interfaces in package ports.
package core

import "strings"

// CatalogID names a catalog of resources.
type CatalogID string

const (
	// National is Sweden's climate-declaration database (Boverket Klimatdatabas).
	National CatalogID = "national"
	// DKBR is the Danish building-regulation generic data (BR18/BR25 Tabel 7).
	DKBR CatalogID = "dkbr"
	// BR25 is an alias of DKBR accepted wherever a catalog id is.
	BR25 CatalogID = "br25"
)

// Catalogs lists the canonical catalog ids in a stable order.
var Catalogs = []CatalogID{National, DKBR}

// Catalog describes one catalog: who publishes it and whether its resources
// have a public product sheet.
type Catalog struct {
	ID CatalogID `json:"id"`
	// Source is the attribution every answer carries.
	Source string `json:"source"`
	// HasOrigin tells whether resources link to a public product sheet.
	HasOrigin bool `json:"has_origin"`
	// Upstream tells whether the catalog is fetched from a publisher's API
	// (true) or only loaded from files and batches (false).
	Upstream bool `json:"upstream"`
}

// Source strings cite the publishers; the service is not affiliated with them.
const (
	SourceNational = "Boverket Klimatdatabas (Boverket, Sweden)"
	SourceDKBR     = "BR18/BR25 Bilag 2 Tabel 7 (Social- og Boligstyrelsen, Denmark)"
	// SourceAll is the attribution of answers that may mix catalogs.
	SourceAll = "Boverket Klimatdatabas (Boverket, Sweden); BR18/BR25 Bilag 2 Tabel 7 (Social- og Boligstyrelsen, Denmark). climatesearch is not affiliated with either publisher."
)

var catalogInfo = map[CatalogID]Catalog{
	National: {ID: National, Source: SourceNational, HasOrigin: true, Upstream: true},
	DKBR:     {ID: DKBR, Source: SourceDKBR, HasOrigin: false, Upstream: false},
}

// ParseCatalog turns user input into a canonical catalog id; `br25` becomes
// `dkbr`. Matching ignores case and surrounding space.
func ParseCatalog(s string) (CatalogID, error) {
	switch CatalogID(strings.ToLower(strings.TrimSpace(s))) {
	case National:
		return National, nil
	case DKBR, BR25:
		return DKBR, nil
	}
	return "", Invalidf("unknown catalog %q: use national, dkbr or br25", s)
}

// ParseCatalogList parses a comma-separated list of catalog ids. Empty input
// means every catalog. Duplicates (also via aliases) collapse.
func ParseCatalogList(s string) ([]CatalogID, error) {
	if strings.TrimSpace(s) == "" {
		return append([]CatalogID(nil), Catalogs...), nil
	}
	return ParseCatalogs(strings.Split(s, ","))
}

// ParseCatalogs parses a list of catalog ids; an empty list means every catalog.
func ParseCatalogs(ids []string) ([]CatalogID, error) {
	seen := map[CatalogID]bool{}
	var out []CatalogID
	for _, part := range ids {
		if strings.TrimSpace(part) == "" {
			continue
		}
		id, err := ParseCatalog(part)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return append([]CatalogID(nil), Catalogs...), nil
	}
	return out, nil
}

// CatalogInfo returns the description of a canonical catalog id.
func CatalogInfo(id CatalogID) Catalog { return catalogInfo[id] }

// Transport is one A4 transport leg of a resource.
type Transport struct {
	Name           string  `json:"name"`
	DistanceKm     float64 `json:"distance_km"`
	Type           string  `json:"type,omitempty"`
	Fuel           string  `json:"fuel,omitempty"`
	FuelResourceID string  `json:"fuel_resource_id,omitempty"`
}

// Resource is a construction product or energy carrier with its climate
// impact. Optional values are nil or empty when the publisher does not
// publish them, and are then omitted from JSON.
type Resource struct {
	ID      string    `json:"id"`
	Catalog CatalogID `json:"catalog"`

	// Name and Description are the texts a client should show first, in the
	// language asked for (falling back to the other languages). NameLang and
	// DescriptionLang say which language they are in, so a client sees when
	// the language asked for had no text (lang=en on a Danish row gives the
	// Danish name and name_lang "da"). All four are filled per request,
	// never stored.
	Name            string `json:"name,omitempty"`
	NameLang        string `json:"name_lang,omitempty"`
	Description     string `json:"description,omitempty"`
	DescriptionLang string `json:"description_lang,omitempty"`

	NameSV string `json:"name_sv,omitempty"`
	NameEN string `json:"name_en,omitempty"`
	NameDA string `json:"name_da,omitempty"`
	// NameDE is a German name: Tabel 7's `Navn DE/ENG` on its #G rows (the
	// ÖKOBAUDAT product name). It is never shown as the English name.
	NameDE          string `json:"name_de,omitempty"`
	DescriptionSV   string `json:"description_sv,omitempty"`
	DescriptionEN   string `json:"description_en,omitempty"`
	DescriptionDA   string `json:"description_da,omitempty"`
	ApplicabilitySV string `json:"applicability_sv,omitempty"`
	ApplicabilityEN string `json:"applicability_en,omitempty"`
	// Synonyms are the publisher's Swedish search synonyms (the spec's field);
	// SynonymsEN the English ones, an extension.
	Synonyms   string `json:"synonyms,omitempty"`
	SynonymsEN string `json:"synonyms_en,omitempty"`

	A1A3             *float64 `json:"a1a3,omitempty"`
	A1A3Conservative *float64 `json:"a1a3_conservative,omitempty"`
	A4               *float64 `json:"a4,omitempty"`
	A51              *float64 `json:"a5_1,omitempty"`
	GWPUnit          string   `json:"gwp_unit,omitempty"`

	ConservativeFactor *float64 `json:"conservative_factor,omitempty"`
	WasteFactor        *float64 `json:"waste_factor,omitempty"`
	BiogenicCarbon     *float64 `json:"biogenic_carbon,omitempty"`
	ServiceLife        string   `json:"service_life,omitempty"`

	Transports  []Transport        `json:"transports,omitempty"`
	Unit        string             `json:"unit,omitempty"`
	Conversions map[string]float64 `json:"conversions,omitempty"`

	// Category is the publisher's category in the catalog's own language
	// (Swedish for national); CategoryEN the English title, an extension.
	Category   string `json:"category,omitempty"`
	CategoryEN string `json:"category_en,omitempty"`
	// CategoryCode is the publisher's category id used in product-sheet links.
	CategoryCode string `json:"category_code,omitempty"`
	// BK04 is the Swedish BK04 classification (code and text) when published.
	BK04 string `json:"bk04,omitempty"`

	Version string `json:"version,omitempty"`
	Source  string `json:"source"`
	Origin  string `json:"origin,omitempty"`

	// Withdrawn marks a resource that vanished from a complete upstream
	// release: kept and readable by id, left out of search and listing.
	Withdrawn bool `json:"withdrawn,omitempty"`
}

// Key identifies a resource across catalogs.
type Key struct {
	Catalog CatalogID
	ID      string
}

func (k Key) String() string { return string(k.Catalog) + ":" + k.ID }

// Key returns the resource's identity.
func (r *Resource) Key() Key { return Key{Catalog: r.Catalog, ID: r.ID} }

// Ref is the prefixed id `catalog:id` users and the details path use.
func (r *Resource) Ref() string { return r.Key().String() }

// Localize fills Name and Description for the language a client shows first,
// falling back to the other languages so a client always has a text, and
// records in NameLang and DescriptionLang which language each is in. English
// falls back to Swedish, then Danish; Swedish to Danish (closer to Swedish
// than English is), then English. A German name (NameDE) is shown only when
// the resource has no other name, and is then labelled "de": never as English.
func (r *Resource) Localize(lang Lang) {
	names := []langText{{"en", r.NameEN}, {"sv", r.NameSV}, {"da", r.NameDA}, {"de", r.NameDE}}
	descs := []langText{{"en", r.DescriptionEN}, {"sv", r.DescriptionSV}, {"da", r.DescriptionDA}}
	if lang != English {
		names = []langText{{"sv", r.NameSV}, {"da", r.NameDA}, {"en", r.NameEN}, {"de", r.NameDE}}
		descs = []langText{{"sv", r.DescriptionSV}, {"da", r.DescriptionDA}, {"en", r.DescriptionEN}}
	}
	r.Name, r.NameLang = firstText(names)
	r.Description, r.DescriptionLang = firstText(descs)
}

type langText struct{ lang, text string }

// firstText returns the first non-empty text and its language.
func firstText(ts []langText) (text, lang string) {
	for _, t := range ts {
		if t.text != "" {
			return t.text, t.lang
		}
	}
	return "", ""
}

// Clone returns a deep copy so callers can localize or edit freely.
func (r Resource) Clone() Resource {
	c := r
	c.A1A3 = clonef(r.A1A3)
	c.A1A3Conservative = clonef(r.A1A3Conservative)
	c.A4 = clonef(r.A4)
	c.A51 = clonef(r.A51)
	c.ConservativeFactor = clonef(r.ConservativeFactor)
	c.WasteFactor = clonef(r.WasteFactor)
	c.BiogenicCarbon = clonef(r.BiogenicCarbon)
	if r.Transports != nil {
		c.Transports = append([]Transport(nil), r.Transports...)
	}
	if r.Conversions != nil {
		c.Conversions = make(map[string]float64, len(r.Conversions))
		for k, v := range r.Conversions {
			c.Conversions[k] = v
		}
	}
	return c
}

func clonef(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// F returns a pointer to v, for optional values.
func F(v float64) *float64 { return &v }

// Lang is the language a client shows first.
type Lang string

const (
	Swedish Lang = "sv"
	English Lang = "en"
)

// ParseLang validates a lang parameter; empty means Swedish.
func ParseLang(s string) (Lang, error) {
	switch Lang(strings.ToLower(strings.TrimSpace(s))) {
	case "", Swedish:
		return Swedish, nil
	case English:
		return English, nil
	}
	return "", Invalidf("unknown lang %q: use sv or en", s)
}

// SourceFor is the attribution of an answer drawn from the given catalogs.
func SourceFor(catalogs []CatalogID) string {
	if len(catalogs) == 1 {
		return CatalogInfo(catalogs[0]).Source + ". climatesearch is not affiliated with the publisher."
	}
	return SourceAll
}

// first returns the first non-empty string.
func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
