package blugeindex

import (
	"strings"

	"github.com/blugelabs/bluge"

	"github.com/climatesearch/climatesearch/core"
)

// Relative weights of query terms (a word as typed weighs 1).
const (
	// weightPart is a part of a compound query word: "sandwichvägg" also
	// looks for "sandwich" and "vägg", less than for the whole word.
	weightPart = 0.6
	// weightJoined is two adjacent query words the catalog writes as one
	// ("climate improved" for "climate-improved"): the words match on their
	// own too, so the joined form only adds a little.
	weightJoined = 0.5
	// weightFuzzy1 and weightFuzzy2 are catalog words one and two edits
	// from a query word: far enough below 1 that a resource matching the
	// word as typed outranks one matching a neighbour.
	weightFuzzy1 = 0.35
	weightFuzzy2 = 0.2
)

// langQuery is the query as one analysis sees it: terms with their relative
// weights, in a stable order, and where each came from.
type langQuery struct {
	weights map[string]float64
	exact   map[string]bool // from the query's own words (and their parts)
	fuzzy   map[string]bool // neighbours of query words
	order   []string
}

func newLangQuery() *langQuery {
	return &langQuery{weights: map[string]float64{}, exact: map[string]bool{}, fuzzy: map[string]bool{}}
}

// termSource tells where a query term came from.
type termSource uint8

const (
	fromQuery     termSource = iota // the query's words, codes, parts
	fromFuzzy                       // a neighbour of a query word
	fromThesaurus                   // a name related through a synonym
)

// add adds a term, keeping its highest weight; a term of the query itself
// is never demoted to a neighbour or a related term.
func (q *langQuery) add(t string, w float64, src termSource) {
	old, seen := q.weights[t]
	if !seen {
		q.order = append(q.order, t)
	}
	switch {
	case src == fromQuery:
		q.exact[t] = true
		delete(q.fuzzy, t)
	case q.exact[t]:
		return
	case src == fromFuzzy:
		q.fuzzy[t] = true
	}
	if w > old {
		q.weights[t] = w
	}
}

// textQuery is a user's text analysed in every language and as exact words:
// the query is matched against both languages (and Danish), whatever the
// client's language; the language only boosts its fields.
type textQuery struct {
	byLang map[core.Lang]*langQuery
}

// analyzeQuery analyses the query text like the documents (same chunks,
// stop words, dictionary and stemmer), then adds what only a query needs:
// adjacent words joined when the catalog writes them as one word ("glass
// wool" -> glasswool, "C30 37" -> c3037), and neighbours of words that may be
// misspelt.
func analyzeQuery(text string, lex *lexicon) *textQuery {
	chunks := splitChunks(text)
	tq := &textQuery{byLang: make(map[core.Lang]*langQuery, len(analysed))}
	for _, la := range analysed {
		tq.byLang[la.lang] = newLangQuery()
	}
	for _, la := range analysed {
		q := tq.byLang[la.lang]
		if !lex.hasLang(la.lang) {
			continue // no resource has text in this language
		}
		lx := lex.langs[la.lang]
		ts := la.analyzeChunks(chunks, lx)
		for _, t := range ts {
			w := 1.0
			if t.kind == kindPart {
				w = weightPart
			}
			q.add(t.text, w, fromQuery)
		}
		lex.expand(tq, la.lang, wordTerms(ts))
		for i := 0; i+1 < len(chunks); i++ {
			a, b := chunks[i].pieces, chunks[i+1].pieces
			if len(a) != 1 || len(b) != 1 || la.isStop(a[0]) || la.isStop(b[0]) {
				continue
			}
			if j := la.stemWith(lx, a[0]+b[0]); lex.inVocab(la.lang, j) {
				q.add(j, weightJoined, fromQuery)
			}
		}
		fx := lex.fuzzy[la.lang]
		if fx == nil {
			continue
		}
		for _, c := range chunks {
			if len(c.pieces) != 1 || !isLetters(c.pieces[0]) || la.isStop(c.pieces[0]) || lex.trusted(c.pieces[0]) {
				continue
			}
			fx.neighbours(c.pieces[0], func(word string, dist int) {
				t := la.stemWith(lx, word)
				w := weightFuzzy1
				if dist > 1 {
					w = weightFuzzy2
				}
				q.add(t, w, fromFuzzy)
			})
		}
	}
	return tq
}

// clause is one (field, term) of a query: its BM25 weight is the field's
// weight, the term's relative weight, the language boost and the term's idf
// over the live documents, all in boost.
type clause struct {
	field, term string
	boost       float64
}

// plan is a query ready to run: a disjunction of clauses, each scored by
// the field's BM25 (liveBM25) and summed over the clauses a document
// matches, restricted to catalogs when it is not nil. buildQuery gives it to
// bluge; topK runs it over bluge's postings with pruning, to the same scores.
type plan struct {
	clauses  []clause
	catalogs []core.CatalogID
}

// planQuery turns the analysed query into clauses: one per (field, term)
// for the terms the field holds, boosted by the field's weight, the term's
// relative weight and the language boost, plus the id keyword when the text
// is an id; restricted to the catalogs when the index holds others. Scores
// are BM25 (without length normalisation on list fields) over the live
// documents (see liveBM25), summed over the matching clauses.
func planQuery(tq *textQuery, lex *lexicon, raw string, lang core.Lang, catalogs []core.CatalogID) *plan {
	p := &plan{}
	for i, f := range textFields {
		q := tq.byLang[f.lang]
		boost := f.weight
		if f.lang == lang {
			boost *= langBoost
		}
		for _, t := range q.order {
			n := lex.docFreq(i, t)
			if n == 0 {
				continue
			}
			w := q.weights[t]
			if w < 1 && !f.label {
				// Compound parts, joined words and neighbours add little
				// in long texts that mention many products.
				continue
			}
			p.clauses = append(p.clauses, clause{field: f.name, term: t, boost: boost * w * lex.idf(i, n)})
		}
	}
	id := strings.ToLower(raw)
	if n := lex.idCount(id); n > 0 {
		// Every live document has the id field.
		idf := bm25IDF(float64(n), float64(len(lex.docs)))
		p.clauses = append(p.clauses, clause{field: fieldID, term: id, boost: weightID * idf})
	}
	if lex.needsFilter(catalogs) {
		p.catalogs = catalogs
	}
	return p
}

// buildQuery is the plan as a bluge query.
func buildQuery(p *plan) bluge.Query {
	match := bluge.NewBooleanQuery().SetMinShould(1)
	for _, c := range p.clauses {
		match.AddShould(bluge.NewTermQuery(c.term).SetField(c.field).SetBoost(c.boost))
	}
	if p.catalogs == nil {
		return match
	}
	return bluge.NewBooleanQuery().AddMust(match, catalogFilter(p.catalogs))
}

// catalogFilter keeps documents of the given catalogs. Its boost is 0 so it
// adds nothing to the score: the BM25 weight of a catalog term depends on how
// many documents each catalog holds, which must not rank one catalog above
// another.
func catalogFilter(catalogs []core.CatalogID) bluge.Query {
	q := bluge.NewBooleanQuery().SetMinShould(1).SetBoost(0)
	for _, c := range catalogs {
		q.AddShould(bluge.NewTermQuery(string(c)).SetField(fieldCatalog))
	}
	return q
}
