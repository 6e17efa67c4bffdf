package blugeindex

import (
	"strings"

	"github.com/blugelabs/bluge/analysis"
	"github.com/blugelabs/bluge/analysis/lang/da"
	"github.com/blugelabs/bluge/analysis/lang/en"
	"github.com/blugelabs/bluge/analysis/lang/sv"

	"github.com/climatesearch/climatesearch/core"
)

// danish tags the Danish fields. core.Lang has no Danish constant because
// clients only choose sv or en; Danish texts come from the dkbr catalog.
const danish core.Lang = "da"

// Field names that are not free text.
const (
	fieldCatalog = "catalog" // keyword, for the catalog filter
	fieldID      = "id"      // keyword: lower-cased bare id and prefixed key
)

// Weights of the text fields: a match in a name says most about what a
// resource is, the publisher's synonyms nearly as much, the category less,
// and long descriptive texts least (they mention many other products).
const (
	weightName          = 4.0
	weightSynonyms      = 3.0
	weightCategory      = 2.0
	weightDescription   = 1.0
	weightApplicability = 1.0

	// weightID makes a query equal to an id rank that resource first.
	weightID = 10.0

	// langBoost favours the fields of the language the client asked for,
	// without excluding the other languages: product names are often
	// searched in the other language (or are the same word in both).
	langBoost = 1.5
)

// Analyzers are stateless (tokenizer, lower-case, stop-word and snowball
// filters keep no state between calls), so one of each is shared by
// indexing and every concurrent query.
var analyzers = map[core.Lang]*analysis.Analyzer{
	core.Swedish: sv.Analyzer(),
	core.English: en.NewAnalyzer(),
	danish:       da.Analyzer(),
}

// textField is one analysed field of the index. The table below is the single
// place that decides what is searchable, in which language and how strongly;
// tuning adds or re-weights rows here.
type textField struct {
	name   string
	lang   core.Lang
	weight float64
	value  func(r *core.Resource) string
}

// ownLang is the language of a catalog's untagged texts (Synonyms, Category):
// Swedish for national, Danish for dkbr.
func ownLang(c core.CatalogID) core.Lang {
	if c == core.DKBR {
		return danish
	}
	return core.Swedish
}

// inOwnLang returns the text only when the catalog's own language is lang,
// so an untagged field lands in the field of the right analyzer.
func inOwnLang(lang core.Lang, get func(r *core.Resource) string) func(r *core.Resource) string {
	return func(r *core.Resource) string {
		if ownLang(r.Catalog) != lang {
			return ""
		}
		return get(r)
	}
}

var textFields = []textField{
	{"name_sv", core.Swedish, weightName, func(r *core.Resource) string { return r.NameSV }},
	{"name_en", core.English, weightName, func(r *core.Resource) string { return r.NameEN }},
	{"name_da", danish, weightName, func(r *core.Resource) string { return r.NameDA }},

	{"synonyms_sv", core.Swedish, weightSynonyms, inOwnLang(core.Swedish, func(r *core.Resource) string { return r.Synonyms })},
	{"synonyms_da", danish, weightSynonyms, inOwnLang(danish, func(r *core.Resource) string { return r.Synonyms })},
	{"synonyms_en", core.English, weightSynonyms, func(r *core.Resource) string { return r.SynonymsEN }},

	{"category_sv", core.Swedish, weightCategory, inOwnLang(core.Swedish, func(r *core.Resource) string { return r.Category })},
	{"category_da", danish, weightCategory, inOwnLang(danish, func(r *core.Resource) string { return r.Category })},
	{"category_en", core.English, weightCategory, func(r *core.Resource) string { return r.CategoryEN }},

	{"description_sv", core.Swedish, weightDescription, func(r *core.Resource) string { return r.DescriptionSV }},
	{"description_en", core.English, weightDescription, func(r *core.Resource) string { return r.DescriptionEN }},
	{"description_da", danish, weightDescription, func(r *core.Resource) string { return r.DescriptionDA }},

	{"applicability_sv", core.Swedish, weightApplicability, func(r *core.Resource) string { return r.ApplicabilitySV }},
	{"applicability_en", core.English, weightApplicability, func(r *core.Resource) string { return r.ApplicabilityEN }},
}

// idTerms are the keyword values under which a resource is found by id:
// the bare id and the prefixed key, lower-cased because users type dkbr ids
// like #G0164 in any case.
func idTerms(k core.Key) []string {
	return []string{strings.ToLower(k.ID), strings.ToLower(k.String())}
}
