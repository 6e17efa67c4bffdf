package blugeindex

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/climatesearch/climatesearch/core"
)

// The index analyses each long field text once, not once per resource.
// Collections repeat their long texts: a product line's variants share a
// description, a manufacturer's library a few templates. The synthetic
// catalog of test/perf (descriptions mixed from real sentences of the
// category) holds 4,409 distinct English descriptions among 200,000
// resources, and the descriptions are 75 % of its text's bytes. Cutting
// a text into chunks depends on the text alone and its terms on the text
// and the dictionary, so the lexicon keeps both per text (fieldMemo),
// across changes, and every resource holding the text shares them: the
// analyses are read, never written, until compact drops them.

// memoMinBytes is the shortest field text the memo keeps; shorter ones
// (a category's one word) are analysed each time.
const memoMinBytes = 16

// remembered tells, per field of textFields, whether the memo keeps its
// texts: not those that hold a resource's names (the name fields, exact),
// which are almost all distinct. Remembering them only pushed the texts
// that repeat out of the memo: a batch of 10,000 synthetic resources put
// 10,000 names in it.
var remembered = func() []bool {
	out := make([]bool, len(textFields))
	for i, f := range textFields {
		out[i] = !strings.HasPrefix(f.name, "name_") && f.lang != exact
	}
	return out
}()

// memoEntries is the most texts a generation of the memo holds. A text
// of the synthetic catalog costs about 9.7 KB (its key, lower-cased copy,
// chunks, terms, distinct terms, words: BenchmarkMemoHeap), so the memo
// holds at most about 80 MB; the million's long texts (9,061) nearly fit
// in its two generations.
const memoEntries = 4096

// fieldMemo is what the index has cut and analysed of its long field
// texts, by field and text, in two generations: a text is looked up in the
// young one, then in the old one (and moved to the young one); when the
// young one is full it becomes the old one and the old one is dropped. So
// the texts a collection repeats stay, and those seen once pass through.
// A lexicon and its copies (clone) share it; the workers of a change use
// it at once.
type fieldMemo struct {
	mu         sync.Mutex
	young, old map[memoKey]*memoEntry
	// langs are the dictionaries of the last change (begin): terms
	// analysed under others are dropped when a change brings new ones,
	// rather than keeping old dictionaries alive.
	langs map[core.Lang]*langLex
}

type memoKey struct {
	field int // in textFields
	text  string
}

// memoEntry is one field text: its chunks and words, and its terms (and,
// for a synonym list, its entries) under each dictionary it was analysed
// with since the index's last changed (begin).
type memoEntry struct {
	text   string // the field's text, as the key holds it
	chunks []chunk
	mu     sync.Mutex
	terms  []memoTerms
	// words are the text's words once each, in order (wordList): nil
	// until listed.
	words []memoWord
	// phrases are a synonym list's entries under each dictionary
	// (synonymPhrases).
	phrases []memoPhrases
}

// memoWord is a word of a remembered text, canonical (own), and whether
// typo correction learns it from a label field (isLabel).
type memoWord struct {
	text  string
	label bool
}

type memoPhrases struct {
	lx      *langLex
	phrases []string
}

type memoTerms struct {
	lx       *langLex
	terms    []term
	distinct []termFreq
}

func newFieldMemo() *fieldMemo { return &fieldMemo{young: map[memoKey]*memoEntry{}} }

// begin is called as a change starts with the index's dictionaries: if
// they are not those of the last change, the terms analysed under any
// other are dropped (the chunks stay).
func (m *fieldMemo) begin(langs map[core.Lang]*langLex) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if maps.Equal(m.langs, langs) {
		return
	}
	m.langs = maps.Clone(langs)
	current := map[*langLex]bool{}
	for _, lx := range langs {
		current[lx] = true
	}
	for _, gen := range []map[memoKey]*memoEntry{m.young, m.old} {
		for _, e := range gen {
			e.mu.Lock()
			e.terms = slices.DeleteFunc(e.terms, func(t memoTerms) bool { return !current[t.lx] })
			e.phrases = slices.DeleteFunc(e.phrases, func(p memoPhrases) bool { return !current[p.lx] })
			e.mu.Unlock()
		}
	}
}

// entry returns the memo of text v of field i, cutting it into chunks the
// first time. Two workers may cut the same text at once; the first one's
// is kept.
func (m *fieldMemo) entry(i int, v string) *memoEntry {
	k := memoKey{i, v}
	m.mu.Lock()
	e := m.young[k]
	if e == nil {
		if e = m.old[k]; e != nil {
			m.keep(k, e)
		}
	}
	m.mu.Unlock()
	if e != nil {
		return e
	}
	e = &memoEntry{text: v, chunks: splitChunks(core.CleanText(v))}
	m.mu.Lock()
	defer m.mu.Unlock()
	if had := m.young[k]; had != nil {
		return had
	}
	m.keep(k, e)
	return e
}

// keep puts e in the young generation, starting a new one when it is
// full; m.mu is held.
func (m *fieldMemo) keep(k memoKey, e *memoEntry) {
	if len(m.young) >= memoEntries {
		m.old, m.young = m.young, make(map[memoKey]*memoEntry, memoEntries)
	}
	m.young[k] = e
}

// analysed returns the entry's terms under lx (analyzeChunks) and their
// distinct list (distinctTerms), analysing them the first time. at and
// canon are the calling worker's.
func (e *memoEntry) analysed(la *language, lx *langLex, at map[string]int, canon canonCache) ([]term, []termFreq) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.terms {
		if t.lx == lx {
			return t.terms, t.distinct
		}
	}
	terms := la.analyzeChunks(e.chunks, lx)
	distinct := distinctTerms(terms, at, canon)
	e.terms = append(e.terms, memoTerms{lx: lx, terms: terms, distinct: distinct})
	return terms, distinct
}

// wordList returns the entry's words, stop words and numbers dropped, each once in
// the order they first occur (what wordsOf lists of a text), listing them
// the first time. canon is the calling worker's.
func (e *memoEntry) wordList(la *language, canon canonCache) []memoWord {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.words != nil {
		return e.words
	}
	seen := map[string]bool{}
	out := []memoWord{}
	for _, c := range e.chunks {
		for _, p := range c.pieces {
			if la.isWord(p) && !seen[p] {
				seen[p] = true
				out = append(out, memoWord{text: canon.own(p), label: isLabel(p)})
			}
		}
	}
	e.words = out
	return out
}

// synonymPhrases returns the entries of the entry's text, a synonym list,
// as thesaurusOf reads them (synonymPhrases of the text) under lx,
// reading them the first time.
func (e *memoEntry) synonymPhrases(la *language, lx *langLex) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.phrases {
		if p.lx == lx {
			return p.phrases
		}
	}
	out := synonymPhrases(la, lx, e.text)
	e.phrases = append(e.phrases, memoPhrases{lx: lx, phrases: out})
	return out
}

// distinctTerms lists each of a field's terms once, in the order they
// first occur, with how often the field holds it; at is a scratch map.
func distinctTerms(terms []term, at map[string]int, canon canonCache) []termFreq {
	clear(at)
	out := make([]termFreq, 0, len(terms))
	for _, t := range terms {
		if j, ok := at[t.text]; ok {
			out[j].n++
		} else {
			at[t.text] = len(out)
			out = append(out, termFreq{text: canon.own(t.text), n: 1})
		}
	}
	return out
}
