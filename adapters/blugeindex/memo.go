package blugeindex

import (
	"sync"

	"github.com/climatesearch/climatesearch/core"
)

// A change analyses each long field text once. Collections repeat their
// long texts: a product line's variants share a description, a
// manufacturer's library a few templates. The synthetic catalog of
// test/perf (descriptions mixed from real sentences of the category) holds
// 4,408 distinct English descriptions among 194,475, which are 75 % of its
// text's bytes. Cutting a text into chunks depends on the text alone and
// its terms on the text and the dictionary, so a change keeps both per
// text (fieldMemo) and every resource holding the text shares them: the
// analyses are read, never written, until compact drops them.

// memoMinBytes is the shortest field text a change remembers: names are
// shorter and almost all distinct, and a short text costs less to analyse
// again than to remember.
const memoMinBytes = 64

// fieldMemo is what one change (lexicon.prepare) has cut and analysed of
// its long field texts, by field and text. Its workers share it; it goes
// when the change is prepared.
type fieldMemo struct {
	mu      sync.Mutex
	entries map[memoKey]*memoEntry
}

type memoKey struct {
	field int // in textFields
	text  string
}

// memoEntry is one field text: its chunks, and its terms under each
// dictionary the change analyses it with (the index's; a new one's).
type memoEntry struct {
	chunks []chunk
	mu     sync.Mutex
	terms  []memoTerms
}

type memoTerms struct {
	lx       *langLex
	terms    []term
	distinct []termFreq
}

func newFieldMemo() *fieldMemo { return &fieldMemo{entries: map[memoKey]*memoEntry{}} }

// entry returns the memo of text v of field i, cutting it into chunks the
// first time. Two workers may cut the same text at once; the first one's
// is kept.
func (m *fieldMemo) entry(i int, v string) *memoEntry {
	k := memoKey{i, v}
	m.mu.Lock()
	e := m.entries[k]
	m.mu.Unlock()
	if e != nil {
		return e
	}
	e = &memoEntry{chunks: splitChunks(core.CleanText(v))}
	m.mu.Lock()
	defer m.mu.Unlock()
	if had := m.entries[k]; had != nil {
		return had
	}
	m.entries[k] = e
	return e
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
