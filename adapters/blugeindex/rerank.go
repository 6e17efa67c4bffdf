package blugeindex

import (
	"cmp"
	"slices"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// Name coverage. BM25 rewards the query terms a resource holds but barely
// notices the words of its name the query lacks, so siblings tie or flip:
// "fabriksbetong C25/30" matches "Fabriksbetong, husbyggnad C25/30" and
// "Fabriksbetong, husbyggnad klimatförbättrad C25/30" on the same terms. The
// best candidates are therefore rescored by how much of their name the query
// covers: score * (1 + coverageBoost * coverage), where coverage is the
// share of the name's word units the query matches, in the language whose
// name it covers best. A unit (a word, or a code such as C25/30) counts 1
// when the query holds its whole term (the word, or the code's joined
// form), weightFuzzyCover when only a neighbour of a query word matches it,
// and otherwise the share of its parts (compound parts, code pieces) the
// query holds, times weightPartCover.
const (
	coverageBoost    = 1.0
	weightFuzzyCover = 0.5
	weightPartCover  = 0.75
	// rerankDepth is how many BM25 candidates are rescored (with every
	// further one that scores as the last, see candidates): enough to lift
	// a fully covered sibling from far below, cheap enough for every query.
	rerankDepth = 25
)

// nameUnit is one word unit of a name: its whole term (a word, or a code's
// joined form) and its parts (compound parts, code pieces).
type nameUnit struct {
	head  string
	parts []string
}

// nameUnits groups the terms of a name field into word units.
func nameUnits(ts []term) []nameUnit {
	var out []nameUnit
	for start := 0; start < len(ts); {
		end := start + 1
		for end < len(ts) && ts[end].unit == ts[start].unit {
			end++
		}
		head := start
		for i := start; i < end; i++ {
			if ts[i].kind == kindJoined {
				head = i
				break
			}
		}
		u := nameUnit{head: ts[head].text}
		for i := start; i < end; i++ {
			if i != head {
				u.parts = append(u.parts, ts[i].text)
			}
		}
		out = append(out, u)
		start = end
	}
	return out
}

// flatNames appends name units to out as an indexed document keeps them
// (docAnalysis.names): flat, each unit its head's id in the lexicon's
// string table, its number of parts, then their ids. Rescoring reads them
// for every candidate (tens of thousands per hybrid search at a million
// resources), so they are walked without strings, maps or pointers, and
// take a third of the memory of nameUnit values.
func flatNames(out []uint32, units []nameUnit, intern func(string) uint32) []uint32 {
	for _, u := range units {
		out = append(out, intern(u.head), uint32(len(u.parts)))
		for _, p := range u.parts {
			out = append(out, intern(p))
		}
	}
	return out
}

// unitAt reads the unit of flat name units (flatNames) that starts
// at i: its head, its parts, and where the next unit starts.
func unitAt(units []uint32, i int) (head uint32, parts []uint32, next int) {
	n := int(units[i+1])
	return units[i], units[i+2 : i+2+n], i + 2 + n
}

// nameTexts returns flat name units (flatNames) as text (tests and
// diagnostics).
func (lex *lexicon) nameTexts(units []uint32) []nameUnit {
	var out []nameUnit
	for i := 0; i < len(units); {
		head, parts, next := unitAt(units, i)
		u := nameUnit{head: lex.strOf[head]}
		for _, p := range parts {
			u.parts = append(u.parts, lex.strOf[p])
		}
		out = append(out, u)
		i = next
	}
	return out
}

// coverQuery is a query as name coverage reads it: per language the
// string table ids of its exact terms (the query's words, codes and parts)
// and of the neighbours of its words, sorted. A term outside the table is
// in no indexed name and is left out.
type coverQuery struct {
	langs []coverLang
	// byIndex are the languages by their index in analysed (nil: not in
	// the query).
	byIndex []*coverLang
}

type coverLang struct {
	lang         core.Lang
	exact, fuzzy []uint32
	// any says the query has exact terms in this language at all (in the
	// table or not): without them the language's names count nothing.
	any bool
}

// newCoverQuery resolves tq's terms against the lexicon's string table.
func newCoverQuery(tq *textQuery, lex *lexicon) *coverQuery {
	cq := &coverQuery{}
	for lang, q := range tq.byLang {
		cl := coverLang{lang: lang, any: len(q.exact) > 0}
		for t := range q.exact {
			if id, ok := lex.strs[t]; ok {
				cl.exact = append(cl.exact, id)
			}
		}
		for t := range q.fuzzy {
			if id, ok := lex.strs[t]; ok {
				cl.fuzzy = append(cl.fuzzy, id)
			}
		}
		slices.Sort(cl.exact)
		slices.Sort(cl.fuzzy)
		cq.langs = append(cq.langs, cl)
	}
	cq.byIndex = make([]*coverLang, len(analysed))
	for i := range cq.langs {
		if li := langIndex(cq.langs[i].lang); li >= 0 {
			cq.byIndex[li] = &cq.langs[i]
		}
	}
	return cq
}

// langIndex is l's index in analysed, -1 when it is none of them.
func langIndex(l core.Lang) int {
	for i, la := range analysed {
		if la.lang == l {
			return i
		}
	}
	return -1
}

// flatCoverage is coverage over a document's names as segmentNames keeps
// them: per name its language's index, its length, its units.
func flatCoverage(names []uint32, cq *coverQuery) float64 {
	best := 0.0
	for i := 0; i < len(names); {
		li, units, next := unitAt(names, i) // the same layout, one level up
		if q := cq.byIndex[li]; q != nil {
			best = max(best, nameCoverage(units, q))
		}
		i = next
	}
	return best
}

// has says whether the sorted ids hold id: a scan for the few terms of a
// typical query, a binary search past that.
func has(ids []uint32, id uint32) bool {
	if len(ids) <= 8 {
		for _, x := range ids {
			if x == id {
				return true
			}
		}
		return false
	}
	_, ok := slices.BinarySearch(ids, id)
	return ok
}

// coverage returns the share of a resource's name the query covers, the best
// over the name languages; names is the buffer it unpacks the document's
// names into.
func coverage(d *docAnalysis, cq *coverQuery, names *[]uint32) float64 {
	if d == nil {
		return 0
	}
	*names = d.appendNames((*names)[:0])
	return flatCoverage(*names, cq)
}

// nameCoverage scores one name's units (flatNames) against the
// query of its language: the mean of unitCoverage over the units.
func nameCoverage(units []uint32, q *coverLang) float64 {
	if len(units) == 0 || !q.any {
		return 0
	}
	var sum float64
	count := 0
	for i := 0; i < len(units); {
		head, parts, next := unitAt(units, i)
		sum += unitCoverage(head, parts, q)
		count++
		i = next
	}
	return sum / float64(count)
}

// unitCoverage scores one word unit.
func unitCoverage(head uint32, parts []uint32, q *coverLang) float64 {
	if has(q.exact, head) {
		return 1
	}
	fuzzy := 0.0
	if has(q.fuzzy, head) {
		fuzzy = weightFuzzyCover
	}
	covered := 0
	for _, p := range parts {
		if has(q.exact, p) {
			covered++
		}
	}
	part := 0.0
	if len(parts) > 0 {
		part = weightPartCover * float64(covered) / float64(len(parts))
	}
	return max(fuzzy, part)
}

// rerank rescores hits by name coverage and orders them best first, equal
// scores by key.
func rerank(hits []core.Scored, tq *textQuery, lex *lexicon) {
	cq := newCoverQuery(tq, lex)
	type keyed struct {
		core.Scored
		ref string // Key.String(), built once rather than at each comparison
	}
	ks := make([]keyed, len(hits))
	var names []uint32
	for i := range hits {
		hits[i].Score *= 1 + coverageBoost*coverage(lex.docs[hits[i].Key], cq, &names)
		ks[i] = keyed{hits[i], hits[i].Key.String()}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ref, b.ref)
	})
	for i := range ks {
		hits[i] = ks[i].Scored
	}
}
