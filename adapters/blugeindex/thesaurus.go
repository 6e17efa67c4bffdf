package blugeindex

import (
	"maps"
	"slices"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// The catalog's own thesaurus. The publisher lists synonyms per resource:
// "Kryssfaner" is a synonym of the resource named "Plywood". A query for a
// synonym finds that resource, but not its relatives that only share the
// name ("Formskiva", in English "Plywood, phenol coated"). So when a query
// phrase equals a synonym entry of at most maxRing resources (a specific
// synonym, not a catch-all such as "Isolering"), the leading words of those
// resources' names in the synonym's language join the query at
// weightRelated. They only add candidates and never count toward the name
// coverage.

const (
	maxRing       = 3
	weightRelated = 0.3
	maxRingWords  = 3 // words of the longest query phrase looked up
)

// thesaurus maps synonym entries to resources, and resources to the terms
// of the leading words of their names.
type thesaurus struct {
	entries map[core.Lang]map[string]map[core.Key]struct{} // entry (word terms joined by spaces) -> resources
	heads   map[core.Key][]langTerms
}

type langTerms struct {
	lang  core.Lang
	terms []string
}

func newThesaurus() *thesaurus {
	return &thesaurus{entries: map[core.Lang]map[string]map[core.Key]struct{}{}, heads: map[core.Key][]langTerms{}}
}

// langPhrase is a synonym entry: its word terms joined by spaces.
type langPhrase struct {
	lang   core.Lang
	phrase string
}

// thesaurusOf returns the synonym entries of a resource and the terms of the
// leading words of its names (up to the first comma or bracket). Only a
// resource with synonym entries can be in a ring (expand reads the heads
// of a ring's resources), so one without has no heads either: most of a
// large catalog has no synonyms, and the heads of every resource were a
// fifth of the lexicon's memory.
func thesaurusOf(r *core.Resource, langs map[core.Lang]*langLex) (entries []langPhrase, heads []langTerms) {
	for _, f := range textFields {
		if !strings.HasPrefix(f.name, "synonyms_") {
			continue
		}
		la := languageOf(f.lang)
		for _, entry := range strings.FieldsFunc(f.value(r), func(r rune) bool { return r == ',' || r == ';' }) {
			if phrase := strings.Join(wordTerms(la.analyze(core.CleanText(entry), langs[f.lang])), " "); phrase != "" {
				entries = append(entries, langPhrase{lang: f.lang, phrase: phrase})
			}
		}
	}
	if len(entries) == 0 {
		return nil, nil
	}
	for _, la := range languages {
		name := core.CleanText(textFields[nameField[la.lang]].value(r))
		if cut := strings.IndexAny(name, ",("); cut >= 0 {
			name = name[:cut]
		}
		var terms []string
		for _, t := range la.analyze(name, langs[la.lang]) {
			if t.kind != kindPart {
				terms = append(terms, t.text)
			}
		}
		if len(terms) > 0 {
			heads = append(heads, langTerms{lang: la.lang, terms: terms})
		}
	}
	return entries, heads
}

// add records the synonym entries and name heads of one resource.
func (th *thesaurus) add(k core.Key, d *docAnalysis) {
	for _, e := range d.synonyms {
		if th.entries[e.lang] == nil {
			th.entries[e.lang] = map[string]map[core.Key]struct{}{}
		}
		ks := th.entries[e.lang][e.phrase]
		if ks == nil {
			ks = map[core.Key]struct{}{}
			th.entries[e.lang][e.phrase] = ks
		}
		ks[k] = struct{}{}
	}
	if len(d.heads) > 0 {
		th.heads[k] = d.heads
	}
}

// remove forgets what add recorded for the resource.
func (th *thesaurus) remove(k core.Key, d *docAnalysis) {
	for _, e := range d.synonyms {
		if ks := th.entries[e.lang][e.phrase]; ks != nil {
			delete(ks, k)
			if len(ks) == 0 {
				delete(th.entries[e.lang], e.phrase)
			}
		}
	}
	delete(th.heads, k)
}

// wordTerms returns the word terms of an analysis in order: no compound
// parts, no joined codes.
func wordTerms(ts []term) []string {
	var out []string
	for _, t := range ts {
		if t.kind == kindWord {
			out = append(out, t.text)
		}
	}
	return out
}

// expand adds the name heads of the resources whose synonym entry equals a
// phrase of the query (of one to maxRingWords words) to the query.
func (th *thesaurus) expand(tq *textQuery, lang core.Lang, words []string) {
	entries := th.entries[lang]
	if len(entries) == 0 {
		return
	}
	for i := range words {
		for j := i + 1; j <= min(len(words), i+maxRingWords); j++ {
			ring := entries[strings.Join(words[i:j], " ")]
			if len(ring) == 0 || len(ring) > maxRing {
				continue
			}
			// In key order: the query's terms come out in the same order
			// whatever the map's.
			ks := slices.SortedFunc(maps.Keys(ring), func(a, b core.Key) int { return strings.Compare(a.String(), b.String()) })
			q := tq.byLang[lang]
			for _, k := range ks {
				for _, h := range th.heads[k] {
					if h.lang != lang {
						continue
					}
					for _, t := range h.terms {
						q.add(t, weightRelated, fromThesaurus)
					}
				}
			}
		}
	}
}
