package blugeindex

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

// fieldIndex returns the index in textFields of the field named name.
func fieldIndex(t *testing.T, name string) int {
	t.Helper()
	for i, f := range textFields {
		if f.name == name {
			return i
		}
	}
	t.Fatalf("no field %s", name)
	return -1
}

// noSources is the sources of a lexicon that indexes nothing yet.
func noSources([]core.Key) (map[core.Key]*core.Resource, error) { return nil, nil }

// targets is targetOf for a test's resources: each by its key.
func targets(tb testing.TB, rs []core.Resource) map[core.Key]*core.Resource {
	tb.Helper()
	target, err := targetOf(rs, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return target
}

// applied prepares the change that indexes rs, none of them indexed yet,
// applies it to lex and returns it.
func applied(tb testing.TB, lex *lexicon, rs []core.Resource) *delta {
	tb.Helper()
	dl, err := lex.prepare(targets(tb, rs), noSources)
	if err != nil {
		tb.Fatal(err)
	}
	lex.apply(dl)
	return dl
}

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
	target := targets(t, append(loadCatalog(t), synthResources(t, 0, 3000)...))
	lex := newLexicon()
	dl, err := lex.prepare(target, noSources)
	if err != nil {
		t.Fatal(err)
	}
	shared := map[*term]core.Key{} // the first terms of a text_en, by the first resource holding them
	sharing := 0
	for k, r := range target {
		d := dl.next[k]
		sameAnalysis(t, k, d, analyze(dl.langs, r, wordsOf(fieldChunks(r, nil))))
		if ts := d.fields[fieldIndex(t, "text_en")]; len(ts) > 0 {
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
	var halves [2][]core.Resource
	for i := range rs {
		halves[i%2] = append(halves[i%2], rs[i])
	}
	byKey, second := targets(t, rs), targets(t, halves[1])
	lex := newLexicon()
	applied(t, lex, halves[0])
	old := lex.langs
	sources := func(keys []core.Key) (map[core.Key]*core.Resource, error) {
		out := map[core.Key]*core.Resource{}
		for _, k := range keys {
			out[k] = byKey[k]
		}
		return out, nil
	}
	dl, err := lex.prepare(second, sources)
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

// TestMemoKeepsWhatRepeats checks the memo's bound: texts seen once pass
// through, at most two generations of memoEntries are held, and a text
// the index keeps seeing stays, analysed once.
func TestMemoKeepsWhatRepeats(t *testing.T) {
	m := newFieldMemo()
	text := fieldIndex(t, "text_en")
	const repeated = "Mineral wool insulation for walls, roofs and floors; made of stone and recycled glass."
	first := m.entry(text, repeated)
	for i := range 5 * memoEntries {
		m.entry(text, fmt.Sprintf("A description seen once, number %d, long enough to be remembered.", i))
		if i%100 == 0 && m.entry(text, repeated) != first {
			t.Fatalf("after %d texts seen once the repeated one was cut again", i)
		}
		if n := len(m.young) + len(m.old); n > 2*memoEntries {
			t.Fatalf("after %d texts the memo holds %d, over two generations of %d", i, n, memoEntries)
		}
	}
	if _, ok := m.young[memoKey{text, "A description seen once, number 0, long enough to be remembered."}]; ok {
		t.Error("the first text seen once is still held after five generations")
	}
}

// TestMemoDropsReplacedDictionaries checks that a change with new
// dictionaries drops the terms analysed under the old ones, which would
// otherwise keep those dictionaries alive.
func TestMemoDropsReplacedDictionaries(t *testing.T) {
	lex := newLexicon()
	change := func(rs []core.Resource) {
		if dl := applied(t, lex, rs); len(dl.langs) == 0 {
			t.Fatal("the change brings no new dictionary: nothing to check")
		}
	}
	analyses := func() (stale, kept int) {
		current := map[*langLex]bool{}
		for _, lx := range lex.langs {
			current[lx] = true
		}
		for _, e := range lex.memo.young {
			for _, ts := range e.terms {
				if current[ts.lx] {
					kept++
				} else {
					stale++
				}
			}
		}
		return stale, kept
	}
	change(synthResources(t, 0, 300))
	change(loadCatalog(t)) // new words: new dictionaries
	if stale, _ := analyses(); stale == 0 {
		t.Fatal("no text of the first change is analysed under a replaced dictionary: nothing to check")
	}
	lex.memo.begin(lex.langs)
	if stale, kept := analyses(); stale > 0 || kept == 0 {
		t.Errorf("after the next change began: %d analyses under replaced dictionaries, %d under the index's", stale, kept)
	}
}

// BenchmarkMemoHeap measures what the memo holds after MEMO_N synthetic
// resources (100,000 by default) indexed in changes of 10,000: the heap a
// collection frees once the memo is dropped, per text and in all.
func BenchmarkMemoHeap(b *testing.B) {
	n := synth.Size(b, "MEMO_N", 100000)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for b.Loop() {
		lex := newLexicon()
		for from := 0; from < n; from += 10000 {
			applied(b, lex, synthResources(b, from, min(10000, n-from)))
		}
		texts := len(lex.memo.young) + len(lex.memo.old)
		with := heap()
		lex.memo = newFieldMemo()
		held := float64(with) - float64(heap())
		b.ReportMetric(float64(texts), "texts")
		b.ReportMetric(held/1e6, "MB")
		b.ReportMetric(held/float64(texts), "B/text")
	}
}
