package blugeindex

import (
	"reflect"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// noSources is the sources of a lexicon that indexes nothing yet.
func noSources([]core.Key) (map[core.Key]*core.Resource, error) { return nil, nil }

// sameAnalysis reports how a change's analysis of a resource differs from
// the resource's analysis alone (no memo) with the same dictionaries.
func sameAnalysis(t *testing.T, k core.Key, got, want *docAnalysis) {
	t.Helper()
	if got.hash != want.hash {
		t.Errorf("%s: hash %x, alone %x", k, got.hash, want.hash)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"terms", got.fields, want.fields}, {"distinct terms", got.distinct, want.distinct}, {"lengths", got.lens, want.lens},
		{"words", got.docWords.words, want.docWords.words}, {"labels", got.docWords.labels, want.docWords.labels}, {"chunks", got.docWords.chunks, want.docWords.chunks},
		{"name units", got.nameUnits, want.nameUnits}, {"synonyms", got.synonyms, want.synonyms}, {"heads", got.headTerms, want.headTerms},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %s %v, alone %v", k, c.what, c.got, c.want)
		}
	}
}

// TestRememberedTextsAnalyseAsAlone checks that a change that analyses
// each long text once (fieldMemo) gives every resource the analysis it
// gets alone: the real catalog and synthetic resources, whose descriptions
// repeat, in one change. Resources holding the same long text share its
// terms.
func TestRememberedTextsAnalyseAsAlone(t *testing.T) {
	rs := append(loadCatalog(t), synthResources(t, 0, 3000)...)
	target := map[core.Key]*core.Resource{}
	for i := range rs {
		target[rs[i].Key()] = &rs[i]
	}
	lex := newLexicon()
	dl, err := lex.prepare(target, noSources)
	if err != nil {
		t.Fatal(err)
	}
	field := map[string]int{}
	for i, f := range textFields {
		field[f.name] = i
	}
	shared := map[*term]core.Key{} // the first terms of a text_en, by the first resource holding them
	sharing := 0
	for k, r := range target {
		d := dl.next[k]
		sameAnalysis(t, k, d, analyze(dl.langs, r, wordsOf(fieldChunks(r, nil))))
		if ts := d.fields[field["text_en"]]; len(ts) > 0 {
			if _, ok := shared[&ts[0]]; ok {
				sharing++
			} else {
				shared[&ts[0]] = k
			}
		}
	}
	if sharing < 1000 {
		t.Errorf("%d of %d resources share the terms of their English text with another: the memo is not used", sharing, len(target))
	}
}

// TestRememberedTextUnderTwoDictionaries checks a change that brings a new
// dictionary: the indexed resources it splits differently are analysed
// under the old dictionary (what to take back) and the new one (what to
// index) with one memo, and each analysis is that dictionary's.
func TestRememberedTextUnderTwoDictionaries(t *testing.T) {
	rs := append(loadCatalog(t), synthResources(t, 0, 2000)...)
	byKey := map[core.Key]*core.Resource{}
	first, second := map[core.Key]*core.Resource{}, map[core.Key]*core.Resource{}
	for i := range rs {
		k := rs[i].Key()
		byKey[k] = &rs[i]
		if i%2 == 0 {
			first[k] = &rs[i]
		} else {
			second[k] = &rs[i]
		}
	}
	lex := newLexicon()
	dl, err := lex.prepare(first, noSources)
	if err != nil {
		t.Fatal(err)
	}
	lex.apply(dl)
	old := lex.langs
	sources := func(keys []core.Key) (map[core.Key]*core.Resource, error) {
		out := map[core.Key]*core.Resource{}
		for _, k := range keys {
			out[k] = byKey[k]
		}
		return out, nil
	}
	dl, err = lex.prepare(second, sources)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl.langs) == 0 {
		t.Fatal("the second half brings no new dictionary: nothing to check")
	}
	again := 0
	for k, prev := range dl.prev {
		r := byKey[k]
		sameAnalysis(t, k, prev, analyze(old, r, wordsOf(fieldChunks(r, nil))))
		if _, ok := second[k]; !ok {
			again++
		}
	}
	for k, next := range dl.next {
		langs := map[core.Lang]*langLex{}
		for l, lx := range old {
			langs[l] = lx
		}
		for l, lx := range dl.langs {
			langs[l] = lx
		}
		r := byKey[k]
		sameAnalysis(t, k, next, analyze(langs, r, wordsOf(fieldChunks(r, nil))))
	}
	if again == 0 {
		t.Fatal("the new dictionary analyses no indexed resource again: nothing to check")
	}
	t.Logf("%d indexed resources analysed again under the new dictionary", again)
}
