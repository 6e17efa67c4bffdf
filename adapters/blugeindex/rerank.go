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

// langNames are the name units of a resource in one language.
type langNames struct {
	lang  core.Lang
	units []nameUnit
}

// coverage returns the share of a resource's name the query covers, the best
// over the name languages.
func coverage(d *docAnalysis, tq *textQuery) float64 {
	if d == nil {
		return 0
	}
	best := 0.0
	for _, n := range d.names {
		if c := nameCoverage(n.units, tq.byLang[n.lang]); c > best {
			best = c
		}
	}
	return best
}

// nameCoverage scores one name's units against the query of its language.
func nameCoverage(units []nameUnit, q *langQuery) float64 {
	if len(units) == 0 || len(q.exact) == 0 {
		return 0
	}
	var sum float64
	for _, u := range units {
		sum += unitCoverage(u, q)
	}
	return sum / float64(len(units))
}

// unitCoverage scores one word unit.
func unitCoverage(u nameUnit, q *langQuery) float64 {
	if q.exact[u.head] {
		return 1
	}
	fuzzy := 0.0
	if q.fuzzy[u.head] {
		fuzzy = weightFuzzyCover
	}
	covered := 0
	for _, p := range u.parts {
		if q.exact[p] {
			covered++
		}
	}
	part := 0.0
	if len(u.parts) > 0 {
		part = weightPartCover * float64(covered) / float64(len(u.parts))
	}
	return max(fuzzy, part)
}

// rerank rescores hits by name coverage and orders them best first, equal
// scores by key.
func rerank(hits []core.Scored, tq *textQuery, lex *lexicon) {
	type keyed struct {
		core.Scored
		ref string // Key.String(), built once rather than at each comparison
	}
	ks := make([]keyed, len(hits))
	for i := range hits {
		hits[i].Score *= 1 + coverageBoost*coverage(lex.docs[hits[i].Key], tq)
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
