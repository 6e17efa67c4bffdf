package blugeindex

import (
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// lexicon is what the index knows about its vocabulary, rebuilt from every
// live resource on each write and swapped atomically: searches read one
// lexicon from start to end without locks.
type lexicon struct {
	// langs are the compound dictionaries and stems, by language.
	langs map[core.Lang]*langLex
	// df counts, per field of textFields, the documents holding each term:
	// a query term absent from a field gets no clause there.
	df []map[string]int32
	// fuzzy indexes the label words of each language.
	fuzzy map[core.Lang]*fuzzyIndex
	// docs is the analysis of every live resource.
	docs map[core.Key]*docAnalysis
	// thes is the catalog's thesaurus: synonym entries and name heads.
	thes *thesaurus
	// ids holds the id keyword terms of the live resources: a query that
	// is no id needs no id clause.
	ids map[string]bool
	// catalogs counts the live resources of each catalog: a search of
	// every catalog the index holds needs no catalog filter.
	catalogs map[core.CatalogID]int
}

// docAnalysis is one resource as the index sees it.
type docAnalysis struct {
	// src is the resource analysed (never modified: the index keeps its
	// own copies).
	src *core.Resource
	*docWords
	// distinct lists each field's terms once, for document frequencies.
	distinct [][]string
	// synonyms and heads are the resource's part of the thesaurus.
	synonyms []langPhrase
	heads    []langTerms
	// fields holds the terms of each field of textFields (nil when empty).
	fields [][]term
	// names are the word units of the names, for the name coverage.
	names []langNames
	// hash fingerprints the terms, so a new dictionary re-indexes only the
	// resources whose analysis it changed.
	hash uint64
}

// buildLexicon analyses the live resources: it first collects the words of
// each language to build the compound dictionaries, then analyses every
// resource with them. Work done for prev is reused: the words of a resource
// prev analysed (the same *core.Resource, never modified), the stems, and
// the whole analysis of a resource none of whose words the new dictionary
// splits differently. A write of a few resources then costs little more
// than their own analysis and a new dictionary.
func buildLexicon(rs map[core.Key]*core.Resource, prev *lexicon) *lexicon {
	words := map[core.Lang]map[string]bool{}
	labelDF := map[core.Lang]map[string]int{}
	for _, la := range languages {
		words[la.lang] = map[string]bool{}
		labelDF[la.lang] = map[string]int{}
	}
	// Sorted keys: the thesaurus and every map built below come out the
	// same whatever the map order, and so do the queries built from them.
	keys := slices.SortedFunc(maps.Keys(rs), func(a, b core.Key) int { return strings.Compare(a.String(), b.String()) })
	known := func(k core.Key) *docAnalysis {
		if prev == nil {
			return nil
		}
		if d := prev.docs[k]; d != nil && d.src == rs[k] {
			return d
		}
		return nil
	}
	texts := make(map[core.Key]*docWords, len(rs))
	for _, k := range keys {
		if d := known(k); d != nil {
			texts[k] = d.docWords
		} else {
			texts[k] = wordsOf(fieldChunks(rs[k]))
		}
		for lang, ws := range texts[k].words {
			for _, w := range ws {
				words[lang][w] = true
			}
		}
		for lang, ws := range texts[k].labels {
			for _, w := range ws {
				labelDF[lang][w]++
			}
		}
	}

	lex := &lexicon{
		langs: map[core.Lang]*langLex{},
		df:    make([]map[string]int32, len(textFields)),
		fuzzy: map[core.Lang]*fuzzyIndex{},
		docs:  make(map[core.Key]*docAnalysis, len(rs)),

		catalogs: map[core.CatalogID]int{},
		thes:     newThesaurus(),
		ids:      make(map[string]bool, 2*len(rs)),
	}
	// A resource's analysis depends on its text and on the stems and
	// compound splits of its words; stems depend on the word alone. So an
	// analysis of prev stays valid unless one of its words now splits
	// differently.
	resplit := map[core.Lang]map[string]bool{}
	for _, la := range languages {
		var old *langLex
		var oldFuzzy *fuzzyIndex
		if prev != nil {
			old, oldFuzzy = prev.langs[la.lang], prev.fuzzy[la.lang]
		}
		lx := old
		if old == nil || !maps.Equal(old.words, words[la.lang]) {
			lx = newLangLex(la, words[la.lang], old)
			if old != nil {
				resplit[la.lang] = map[string]bool{}
				for w := range old.words {
					if lx.words[w] && !slices.Equal(old.splits[w], lx.splits[w]) {
						resplit[la.lang][w] = true
					}
				}
			}
		}
		lex.langs[la.lang] = lx
		lex.fuzzy[la.lang] = newFuzzyIndex(labelDF[la.lang], oldFuzzy)
	}
	stale := func(dw *docWords) bool {
		for lang, ws := range dw.words {
			if rs := resplit[lang]; len(rs) > 0 {
				for _, w := range ws {
					if rs[w] {
						return true
					}
				}
			}
		}
		return false
	}
	// Document frequencies are prev's, less the analyses that left, plus
	// the ones that came: a small write touches a few documents' terms.
	for i := range lex.df {
		if prev != nil {
			lex.df[i] = maps.Clone(prev.df[i])
		} else {
			lex.df[i] = map[string]int32{}
		}
	}
	for _, k := range keys {
		d := known(k)
		if d == nil || stale(d.docWords) {
			d = lex.analyze(rs[k], texts[k])
		}
		lex.docs[k] = d
		lex.catalogs[k.Catalog]++
		for _, t := range idTerms(k) {
			lex.ids[t] = true
		}
		lex.thes.add(k, d)
		if prev == nil || prev.docs[k] != d {
			lex.count(d, 1)
		}
	}
	if prev != nil {
		for k, d := range prev.docs {
			if lex.docs[k] != d {
				lex.count(d, -1)
			}
		}
	}
	return lex
}

// docWords are the words of a resource by language (stop words dropped,
// each once): the material of the compound dictionary and, for the label
// fields, of typo correction. They depend on the text only.
type docWords struct {
	chunks [][]chunk // per field of textFields
	words  map[core.Lang][]string
	labels map[core.Lang][]string // letters only, long enough to correct
}

// fieldChunks cuts every field of a resource into chunks.
func fieldChunks(r *core.Resource) [][]chunk {
	cs := make([][]chunk, len(textFields))
	for i, f := range textFields {
		if v := core.CleanText(f.value(r)); v != "" {
			cs[i] = splitChunks(v)
		}
	}
	return cs
}

func wordsOf(cs [][]chunk) *docWords {
	dw := &docWords{chunks: cs, words: map[core.Lang][]string{}, labels: map[core.Lang][]string{}}
	seen := map[core.Lang]map[string]bool{}
	seenLabel := map[core.Lang]map[string]bool{}
	for i, f := range textFields {
		if f.lang == exact || len(cs[i]) == 0 {
			continue
		}
		la := languageOf(f.lang)
		if seen[f.lang] == nil {
			seen[f.lang], seenLabel[f.lang] = map[string]bool{}, map[string]bool{}
		}
		for _, c := range cs[i] {
			for _, p := range c.pieces {
				if la.isStop(p) {
					continue
				}
				if !seen[f.lang][p] {
					seen[f.lang][p] = true
					dw.words[f.lang] = append(dw.words[f.lang], p)
				}
				if f.label && !seenLabel[f.lang][p] && isLetters(p) && runeLen(p) >= minFuzzy-1 {
					seenLabel[f.lang][p] = true
					dw.labels[f.lang] = append(dw.labels[f.lang], p)
				}
			}
		}
	}
	return dw
}

// newLangLex builds the compound dictionary of a language and stems and
// splits every word of the catalog once, not once per occurrence. Stems
// depend on the word alone and are taken from prev when it has them.
func newLangLex(la *language, words map[string]bool, prev *langLex) *langLex {
	dict := buildCompoundDict(la, words)
	lx := &langLex{
		words:  words,
		dict:   dict,
		stems:  make(map[string]string, len(dict.words)),
		splits: make(map[string][]string, len(words)),
	}
	stem := func(w string) string {
		if prev != nil {
			if s, ok := prev.stems[w]; ok {
				return s
			}
		}
		return la.stemOf(w)
	}
	for w := range words {
		lx.stems[w] = stem(w)
		if parts := dict.split(w); parts != nil {
			lx.splits[w] = parts
		}
	}
	for w := range dict.words {
		if _, ok := lx.stems[w]; !ok {
			lx.stems[w] = stem(w)
		}
	}
	return lx
}

// count adds (delta 1) or removes (-1) the terms of an analysis to the
// document frequencies.
func (lex *lexicon) count(d *docAnalysis, delta int32) {
	for i, ts := range d.distinct {
		for _, t := range ts {
			if n := lex.df[i][t] + delta; n > 0 {
				lex.df[i][t] = n
			} else {
				delete(lex.df[i], t)
			}
		}
	}
}

// trusted tells whether w is a word the catalog spells so in the labels of
// several resources, in any language: a correct word of one language is no
// typo of another.
func (lex *lexicon) trusted(w string) bool {
	for _, fx := range lex.fuzzy {
		if fx.trusted(w) {
			return true
		}
	}
	return false
}

// inVocab tells whether any field of the language holds the term.
func (lex *lexicon) inVocab(lang core.Lang, t string) bool {
	for i, f := range textFields {
		if f.lang == lang && lex.df[i][t] > 0 {
			return true
		}
	}
	return false
}

// hasLang tells whether any resource has text in the language.
func (lex *lexicon) hasLang(lang core.Lang) bool {
	for i, f := range textFields {
		if f.lang == lang && len(lex.df[i]) > 0 {
			return true
		}
	}
	return false
}

// needsFilter tells whether a search of the given catalogs (none: all) must
// filter: only when the index holds resources of another catalog.
func (lex *lexicon) needsFilter(catalogs []core.CatalogID) bool {
	if len(catalogs) == 0 {
		return false
	}
	for c := range lex.catalogs {
		if !slices.Contains(catalogs, c) {
			return true
		}
	}
	return false
}

// analyze analyses every field of a resource (its words cut into chunks).
func (lex *lexicon) analyze(r *core.Resource, dw *docWords) *docAnalysis {
	chunks := dw.chunks
	d := &docAnalysis{src: r, docWords: dw, fields: make([][]term, len(textFields)), distinct: make([][]string, len(textFields))}
	h := fnv.New64a()
	seen := map[string]bool{}
	for i, f := range textFields {
		if len(chunks[i]) == 0 {
			continue
		}
		d.fields[i] = languageOf(f.lang).analyzeChunks(chunks[i], lex.langs[f.lang])
		if i == nameField[f.lang] && f.lang != exact {
			d.names = append(d.names, langNames{lang: f.lang, units: nameUnits(d.fields[i])})
		}
		clear(seen)
		for _, t := range d.fields[i] {
			if !seen[t.text] {
				seen[t.text] = true
				d.distinct[i] = append(d.distinct[i], t.text)
			}
			_, _ = h.Write([]byte{byte(i), byte(t.kind), byte(t.unit), byte(t.unit >> 8), byte(t.unit >> 16)})
			_, _ = h.Write([]byte(t.text))
			_, _ = h.Write([]byte{0})
		}
	}
	d.hash = h.Sum64()
	d.synonyms, d.heads = thesaurusOf(r, lex.langs)
	return d
}
