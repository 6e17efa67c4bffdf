package blugeindex

import (
	"math"
	"strings"

	blugesearch "github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/similarity"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/climatesearch/climatesearch/core"
)

// danish tags the Danish fields. core.Lang has no Danish constant because
// clients only choose sv or en; Danish texts come from the dkbr catalog.
const danish core.Lang = "da"

// exact tags the field of unstemmed words, which belongs to no language.
const exact core.Lang = ""

// Field names that are not free text.
const (
	fieldCatalog = "catalog" // keyword, for the catalog filter
	fieldID      = "id"      // keyword: lower-cased bare id and prefixed key
)

// Weights of the text fields: a match in a name says most about what a
// resource is, the publisher's synonyms nearly as much, the category and the
// BK04 classification less, and long descriptive texts least (they mention
// many other products).
const (
	weightName           = 4.0
	weightSynonyms       = 3.0
	weightCategory       = 1.5
	weightClassification = 1.5
	// weightText is the description and applicability, one field per
	// language (one clause per term, not two).
	weightText = 0.5
	// weightExact rewards the very word the user typed ("glazing", not
	// only something that stems alike, such as "glazed").
	weightExact = 2.0

	// weightID makes a query equal to an id rank that resource first.
	weightID = 10.0

	// langBoost favours the fields of the language the client asked for,
	// without excluding the other languages: product names are often
	// searched in the other language (or are the same word in both).
	langBoost = 1.5
)

// textField is one analysed field of the index. The table below is the single
// place that decides what is searchable, in which language and how strongly;
// tuning adds or re-weights rows here.
type textField struct {
	name   string
	lang   core.Lang
	weight float64
	// label marks the short fields that name a resource (names, synonyms,
	// categories, classification): their words are the vocabulary of typo
	// correction, and the names are what the name coverage measures.
	label bool
	// list marks fields that are lists of alternatives (synonyms,
	// categories): a list that names more alternatives is no weaker a
	// match, so BM25 does not normalise their length.
	list  bool
	value func(r *core.Resource) string
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

// nameField is the index in textFields of each language's name field.
var nameField = map[core.Lang]int{}

var textFields = []textField{
	{"name_sv", core.Swedish, weightName, true, false, func(r *core.Resource) string { return r.NameSV }},
	{"name_en", core.English, weightName, true, false, func(r *core.Resource) string { return r.NameEN }},
	{"name_da", danish, weightName, true, false, func(r *core.Resource) string { return r.NameDA }},

	{"synonyms_sv", core.Swedish, weightSynonyms, true, true, inOwnLang(core.Swedish, func(r *core.Resource) string { return r.Synonyms })},
	{"synonyms_da", danish, weightSynonyms, true, true, inOwnLang(danish, func(r *core.Resource) string { return r.Synonyms })},
	{"synonyms_en", core.English, weightSynonyms, true, true, func(r *core.Resource) string { return r.SynonymsEN }},

	{"category_sv", core.Swedish, weightCategory, true, true, inOwnLang(core.Swedish, func(r *core.Resource) string { return r.Category })},
	{"category_da", danish, weightCategory, true, true, inOwnLang(danish, func(r *core.Resource) string { return r.Category })},
	{"category_en", core.English, weightCategory, true, true, func(r *core.Resource) string { return r.CategoryEN }},
	// BK04 is Swedish ("01301 Mineralull"): it groups glass and stone wool
	// under the word users search them by.
	{"bk04_sv", core.Swedish, weightClassification, true, true, func(r *core.Resource) string { return r.BK04 }},

	// The long texts: what a resource is made of and what it is used for.
	{"text_sv", core.Swedish, weightText, false, false, func(r *core.Resource) string {
		return joinTexts(r.DescriptionSV, r.ApplicabilitySV)
	}},
	{"text_en", core.English, weightText, false, false, func(r *core.Resource) string {
		return joinTexts(r.DescriptionEN, r.ApplicabilityEN)
	}},
	{"text_da", danish, weightText, false, false, func(r *core.Resource) string { return r.DescriptionDA }},

	// exact holds the unstemmed words of every name and synonym list. It is
	// also the only field of German names (Tabel 7's ÖKOBAUDAT names): they
	// are found by their words ("Teppichfliesen") but analysed as no
	// language, so they neither pass for English nor teach typo correction.
	{"exact", exact, weightExact, false, true, func(r *core.Resource) string {
		return joinTexts(r.NameSV, r.NameEN, r.NameDA, r.NameDE, r.Synonyms, r.SynonymsEN)
	}},
}

// joinTexts joins texts as separate lines, skipping empty ones.
func joinTexts(texts ...string) string {
	var b strings.Builder
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}

func init() {
	for i, f := range textFields {
		if strings.HasPrefix(f.name, "name_") {
			nameField[f.lang] = i
		}
	}
}

// similarities returns bluge's per-field similarity: BM25 everywhere, without
// length normalisation on list fields.
func similarities(lex func() *lexicon) map[string]blugesearch.Similarity {
	out := map[string]blugesearch.Similarity{
		// Every id keyword field is two terms long; the idf is the query's.
		fieldID:      liveBM25{b: 0.75, k1: 1.2, avgLen: func() float64 { return 2 }},
		fieldCatalog: liveBM25{b: 0.75, k1: 1.2, avgLen: func() float64 { return 1 }},
	}
	for i, f := range textFields {
		b := 0.75
		if f.list {
			b = 0
		}
		out[f.name] = liveBM25{b: b, k1: 1.2, avgLen: func() float64 { return lex().avgLen(i) }}
	}
	return out
}

// liveBM25 is bluge's BM25 with the collection statistics of the live
// documents instead of bluge's, which count replaced and deleted documents
// until a merge drops them: scores, and so rankings, would depend on the
// ingest history and shift while merges run. The query supplies each term's
// idf in its boost (lexicon.idf), and avgLen the field's average length; the
// lexicon they read cannot change during a search (the index's lock).
type liveBM25 struct {
	b, k1  float64
	avgLen func() float64
}

func (s liveBM25) ComputeNorm(numTerms int) float32 {
	return math.Float32frombits(uint32(numTerms)) // as bluge's BM25
}

func (s liveBM25) Scorer(boost float64, _ segment.CollectionStats, _ segment.TermStats) blugesearch.Scorer {
	return similarity.NewBM25Scorer(1, s.k1, s.b, s.avgLen(), blugesearch.NewExplanation(boost, "boost * idf over live documents"))
}

// idTerms are the keyword values under which a resource is found by id:
// the bare id and the prefixed key, lower-cased because users type dkbr ids
// like #G0164 in any case.
func idTerms(k core.Key) []string {
	return []string{strings.ToLower(k.ID), strings.ToLower(k.String())}
}

// idHash fingerprints a resource's prefixed key, lower-cased (64-bit
// FNV-1a of its parts, which are joined): the lexicon counts the live
// resources under each by its fingerprint, not its text, and derives from
// these counts how many resources each id term matches (lexicon.idCount).
// Strings were a tenth of the heap's objects at a million resources, each
// a pointer the collector follows on every cycle; one fingerprint per
// resource instead of one per id term halves the map a restart builds.
// Two keys that share a fingerprint (odds of about 1 in 10^7 among a
// million ids) only make a search add an id clause that finds nothing, or
// weigh an id clause by the two counts together.
type idHash uint64

// hashOf returns the fingerprint of the concatenation of parts.
func hashOf(parts ...string) idHash {
	h := uint64(14695981039346656037)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= 1099511628211
		}
	}
	return idHash(h)
}

// keyHash is the fingerprint of k's prefixed id term (idTerms) without
// building it: lower-casing maps rune by rune, so the key's lower case is
// its catalog's, a colon and its id's (and ToLower allocates nothing when
// there is no upper case, as in most ids).
func keyHash(k core.Key) idHash {
	return hashOf(strings.ToLower(string(k.Catalog)), ":", strings.ToLower(k.ID))
}
