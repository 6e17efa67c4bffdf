package blugeindex

import (
	"strings"

	"github.com/blugelabs/bluge"

	"github.com/climatesearch/climatesearch/core"
)

// buildQuery turns cleaned, non-empty user text into a bluge query: a
// disjunction over every text field (and the id keyword), restricted to the
// catalogs when any are given. Scores are BM25 (bluge's default similarity),
// summed over the matching clauses.
func buildQuery(text string, lang core.Lang, catalogs []core.CatalogID) bluge.Query {
	terms := analyzeQuery(text)

	match := bluge.NewBooleanQuery().SetMinShould(1)
	for _, f := range textFields {
		ts := terms[f.lang]
		if len(ts) == 0 {
			continue
		}
		w := f.weight
		if f.lang == lang {
			w *= langBoost
		}
		match.AddShould(fieldClause(f.name, ts, w))
	}
	match.AddShould(bluge.NewTermQuery(strings.ToLower(text)).SetField(fieldID).SetBoost(weightID))

	if len(catalogs) == 0 {
		return match
	}
	return bluge.NewBooleanQuery().AddMust(match, catalogFilter(catalogs))
}

// analyzeQuery runs the text through each language's analyzer once (many
// fields share an analyzer) and keeps each term once: a word typed twice
// should not count twice.
func analyzeQuery(text string) map[core.Lang][]string {
	out := make(map[core.Lang][]string, len(analyzers))
	for lang, a := range analyzers {
		seen := map[string]bool{}
		for _, tok := range a.Analyze([]byte(text)) {
			t := string(tok.Term)
			if t == "" || seen[t] {
				continue
			}
			seen[t] = true
			out[lang] = append(out[lang], t)
		}
	}
	return out
}

// fieldClause matches any of the analysed terms in one field. The weight is
// set on the term queries only: bluge's MatchQuery sets it on both the terms
// and their disjunction, which squares it.
func fieldClause(field string, terms []string, weight float64) bluge.Query {
	q := bluge.NewBooleanQuery().SetMinShould(1)
	for _, t := range terms {
		q.AddShould(bluge.NewTermQuery(t).SetField(field).SetBoost(weight))
	}
	return q
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
