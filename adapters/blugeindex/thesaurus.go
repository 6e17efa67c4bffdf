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

// thesaurus maps synonym entries to the resources that list them. An entry
// is a ring only while at most maxRing resources list it, so a ring keeps
// its members only then; above, a count. Synthetic and manufacturer
// catalogs copy one synonym onto thousands of resources: keeping every
// member was a fifth of the lexicon's memory at a million resources.
// When removals bring an entry back to maxRing, its members are found
// again among the documents' synonym ids (settle), once per change.
type thesaurus struct {
	rings map[uint32]*ring // entry id (see entryKey) -> who lists it
	lost  map[uint32]bool  // rings back at maxRing, members not yet found
}

// ring is the resources that list one synonym entry: keys holds them
// while n <= maxRing (nil above, or while lost).
type ring struct {
	n    int32
	keys []core.Key
}

func newThesaurus() *thesaurus {
	return &thesaurus{rings: map[uint32]*ring{}, lost: map[uint32]bool{}}
}

// clone returns a copy whose rings add and remove can change apart from
// this one's (lexicon.clone).
func (th *thesaurus) clone() *thesaurus {
	c := &thesaurus{rings: make(map[uint32]*ring, len(th.rings)), lost: maps.Clone(th.lost)}
	for e, r := range th.rings {
		c.rings[e] = &ring{n: r.n, keys: slices.Clone(r.keys)}
	}
	return c
}

// langTerms are the terms of a name's leading words in one language.
type langTerms struct {
	lang  core.Lang
	terms []string
}

// entryKey is the string a synonym entry is interned as: its language and
// its word terms.
func entryKey(lang core.Lang, phrase string) string { return string(lang) + "\x00" + phrase }

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
// A synonym list the lexicon's memo keeps (memo, per field of
// textFields; nil: none) is read once per dictionary.
func thesaurusOf(r *core.Resource, langs map[core.Lang]*langLex, memo []*memoEntry) (entries []langPhrase, heads []langTerms) {
	for i, f := range textFields {
		if !strings.HasPrefix(f.name, "synonyms_") {
			continue
		}
		la := languageOf(f.lang)
		var phrases []string
		if memo != nil && memo[i] != nil {
			phrases = memo[i].synonymPhrases(la, langs[f.lang])
		} else {
			phrases = synonymPhrases(la, langs[f.lang], f.value(r))
		}
		for _, phrase := range phrases {
			entries = append(entries, langPhrase{lang: f.lang, phrase: phrase})
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

// synonymPhrases returns the entries of a synonym list (separated by
// commas or semicolons) as their word terms under lx joined by spaces,
// leaving out those without any.
func synonymPhrases(la *language, lx *langLex, list string) []string {
	var out []string
	for _, entry := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ';' }) {
		if phrase := strings.Join(wordTerms(la.analyze(core.CleanText(entry), lx)), " "); phrase != "" {
			out = append(out, phrase)
		}
	}
	return out
}

// add counts the resource in the rings of its synonym entries (the ids of
// docAnalysis.entries).
func (th *thesaurus) add(k core.Key, entries []uint32) {
	for _, e := range entries {
		r := th.rings[e]
		if r == nil {
			r = &ring{}
			th.rings[e] = r
		}
		r.n++
		switch {
		case r.n > maxRing:
			r.keys = nil
		case !th.lost[e]:
			r.keys = append(r.keys, k)
		}
	}
}

// remove counts the resource out of the rings of its synonym entries.
func (th *thesaurus) remove(k core.Key, entries []uint32) {
	for _, e := range entries {
		r := th.rings[e]
		if r == nil {
			continue
		}
		r.n--
		switch {
		case r.n <= 0:
			delete(th.rings, e)
			delete(th.lost, e)
		case r.keys != nil:
			r.keys = slices.DeleteFunc(r.keys, func(o core.Key) bool { return o == k })
		case r.n == maxRing:
			th.lost[e] = true
		}
	}
}

// settle finds the members of the rings that removals brought back to
// maxRing, from the documents' synonym ids: one pass over the documents
// per change that needs it.
func (th *thesaurus) settle(docs map[core.Key]*docAnalysis) {
	for e := range th.lost {
		if r := th.rings[e]; r == nil || r.n > maxRing {
			delete(th.lost, e)
		} else {
			r.keys = r.keys[:0]
		}
	}
	if len(th.lost) == 0 {
		return
	}
	var entries []uint32
	for k, d := range docs {
		entries = d.appendEntries(entries[:0])
		for _, e := range entries {
			if th.lost[e] {
				th.rings[e].keys = append(th.rings[e].keys, k)
			}
		}
	}
	clear(th.lost)
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
func (lex *lexicon) expand(tq *textQuery, lang core.Lang, words []string) {
	if len(lex.thes.rings) == 0 {
		return
	}
	for i := range words {
		for j := i + 1; j <= min(len(words), i+maxRingWords); j++ {
			id, ok := lex.strs[entryKey(lang, strings.Join(words[i:j], " "))]
			if !ok {
				continue
			}
			ring := lex.thes.rings[id]
			if ring == nil || ring.n > maxRing {
				continue
			}
			// In key order: the query's terms come out in the same order
			// whatever the map's.
			ks := slices.SortedFunc(slices.Values(ring.keys), func(a, b core.Key) int { return strings.Compare(a.String(), b.String()) })
			q := tq.byLang[lang]
			for _, k := range ks {
				d := lex.docs[k]
				if d == nil {
					continue
				}
				heads := d.heads()
				for h := 0; h < len(heads); {
					li, ids, next := unitAt(heads, h)
					h = next
					if analysed[li].lang != lang {
						continue
					}
					for _, t := range ids {
						q.add(lex.strOf[t], weightRelated, fromThesaurus)
					}
				}
			}
		}
	}
}
