package blugeindex

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// answers runs every golden query (all catalogs, 20 hits) and returns the
// hits with their scores, one line per hit.
func answers(t *testing.T, x *Index, golden []goldenQuery) []string {
	t.Helper()
	var out []string
	for _, g := range golden {
		for i, h := range search(t, x, core.TextQuery{Text: g.Q, Lang: g.Lang, Limit: 20}) {
			out = append(out, fmt.Sprintf("%s #%d %s %.12g", g.ID, i+1, h.Key, h.Score))
		}
	}
	return out
}

// TestRankingIndependentOfHistory loads the same live resources through
// different histories and asks the dev golden set of each: the hits, their
// order and their scores must be the same. The histories:
//
//   - one batch (what a restart's rebuild does for a small catalog);
//   - ten batches in reverse order, with between them updates that rename
//     resources (new words, so new compound dictionaries) and withdrawals,
//     all undone by later batches (the documents bluge keeps until a merge
//     drop the old versions);
//   - the resources one by one, with every tenth removed and added again.
//
// Before the statistics were taken over live documents only, the second
// history scored with bluge's counts of replaced documents; before compound
// modifiers were learned independently of map order, even two runs of the
// first history could analyse a text differently.
func TestRankingIndependentOfHistory(t *testing.T) {
	ctx := context.Background()
	golden := loadGolden(t)
	rs := loadCatalog(t)
	want := answers(t, newIndex(t, rs), golden)
	if len(want) < len(golden) {
		t.Fatalf("only %d hits for %d golden queries", len(want), len(golden))
	}

	histories := map[string]func(x *Index) error{
		"ten batches with updates and withdrawals": func(x *Index) error {
			rev := slices.Clone(rs)
			slices.Reverse(rev)
			for b := 0; b < 10; b++ {
				chunk := rev[b*len(rev)/10 : (b+1)*len(rev)/10]
				if err := x.Upsert(ctx, chunk); err != nil {
					return err
				}
				// Rename a few loaded resources (words the catalog lacks,
				// compounds of words it has) and withdraw a few.
				var renamed, gone []core.Resource
				for i := 0; i < len(chunk); i += 7 {
					r := chunk[i].Clone()
					r.NameSV = "Provträullsandwichskiva " + r.NameSV + fmt.Sprintf(" omgång%d", b)
					r.NameEN = strings.ToUpper(r.NameEN) + " trial"
					renamed = append(renamed, r)
				}
				for i := 3; i < len(chunk); i += 11 {
					w := chunk[i].Clone()
					w.Withdrawn = true
					gone = append(gone, w)
				}
				if err := x.Upsert(ctx, append(renamed, gone...)); err != nil {
					return err
				}
				if b > 0 { // restore the previous chunk's originals
					if err := x.Upsert(ctx, rev[(b-1)*len(rev)/10:b*len(rev)/10]); err != nil {
						return err
					}
				}
			}
			return x.Upsert(ctx, rev[9*len(rev)/10:])
		},
		"one by one with removals": func(x *Index) error {
			for i, r := range rs {
				if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
					return err
				}
				if i%10 == 0 {
					if err := x.Remove(ctx, []core.Key{r.Key()}); err != nil {
						return err
					}
					if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	for name, history := range histories {
		t.Run(name, func(t *testing.T) {
			x, err := New()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = x.Close() })
			if err := history(x); err != nil {
				t.Fatal(err)
			}
			got := answers(t, x, golden)
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("answers differ from the one-batch index (%d vs %d hits), first at %d:\n got %s\nwant %s", len(got), len(want), i, got[i], want[i])
					}
				}
				t.Fatalf("answers differ from the one-batch index: %d vs %d hits", len(got), len(want))
			}
		})
	}
}

// alike returns n resources named alike, in a shuffled order.
func alike(n int) []core.Resource {
	rs := make([]core.Resource, n)
	for i := range rs {
		j := (i * 7919) % n // a permutation: 7919 is prime and n is not its multiple
		rs[i] = core.Resource{Catalog: core.DKBR, ID: fmt.Sprintf("#T%05d", j), NameDA: "Prøvesten blok"}
	}
	return rs
}

// TestLargeTieGroupsOrderedByKey: thousands of resources of the same score
// (the same name) answer in key order, whatever order and batches they came
// in; the group exceeds what candidates fetches, so this is the key-ordered
// path.
func TestLargeTieGroupsOrderedByKey(t *testing.T) {
	rs := alike(5000)
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	for i := 0; i < len(rs); i += 700 {
		if err := x.Upsert(context.Background(), rs[i:min(len(rs), i+700)]); err != nil {
			t.Fatal(err)
		}
	}
	got := ids(search(t, x, core.TextQuery{Text: "prøvesten", Limit: 10}))
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("dkbr:#T%05d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// BenchmarkLargeTieGroup is a search whose matches all score alike (20,000
// resources of one name): before the key-ordered path, about 160 ms.
func BenchmarkLargeTieGroup(b *testing.B) {
	x := newIndex(b, alike(20000))
	for b.Loop() {
		if _, err := x.Search(context.Background(), core.TextQuery{Text: "prøvesten", Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLexiconAfterHistoryEqualsFresh: the counts and sets a history of
// changes leaves in the lexicon (words, label words, term and field
// statistics, ids, catalogs, thesaurus, dictionaries) are those of a
// lexicon built at once from the same live resources.
func TestLexiconAfterHistoryEqualsFresh(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	for b := 0; b < 5; b++ {
		chunk := rs[b*len(rs)/5 : (b+1)*len(rs)/5]
		if err := x.Upsert(ctx, chunk); err != nil {
			t.Fatal(err)
		}
		var renamed []core.Resource
		var gone []core.Key
		for i := 0; i < len(chunk); i += 5 {
			r := chunk[i].Clone()
			r.NameSV = "Skumglasblock " + r.NameSV + " lättviktsvariant"
			r.Synonyms = "Provsynonym" + fmt.Sprint(b)
			renamed = append(renamed, r)
		}
		for i := 2; i < len(chunk); i += 9 {
			gone = append(gone, chunk[i].Key())
		}
		if err := x.Upsert(ctx, renamed); err != nil {
			t.Fatal(err)
		}
		if err := x.Remove(ctx, gone); err != nil {
			t.Fatal(err)
		}
	}
	// Live now: everything, with the renames of the last round undone for
	// half of them and the removed ones back.
	if err := x.Upsert(ctx, rs[:len(rs)/2]); err != nil {
		t.Fatal(err)
	}
	var kept []core.Key
	for _, r := range rs[len(rs)/2:] {
		if x.lex.docs[r.Key()] != nil {
			kept = append(kept, r.Key())
		}
	}
	srcs, err := x.sources(kept)
	if err != nil {
		t.Fatal(err)
	}
	var live []core.Resource
	for _, k := range kept {
		live = append(live, *srcs[k])
	}
	live = append(live, rs[:len(rs)/2]...)
	fresh := newIndex(t, live)
	sameLexicon(t, x.lex, fresh.lex)
}

// sameLexicon fails when two lexicons differ in anything a search or the
// next change reads.
func sameLexicon(t *testing.T, a, b *lexicon) {
	t.Helper()
	for name, pair := range map[string][2]any{
		"words":     {a.words, b.words},
		"labels":    {a.labels, b.labels},
		"df":        {dfAsText(a), dfAsText(b)},
		"fieldDocs": {a.fieldDocs, b.fieldDocs},
		"fieldLen":  {a.fieldLen, b.fieldLen},
		"ids":       {a.ids, b.ids},
		"catalogs":  {a.catalogs, b.catalogs},
		"thesaurus": {thesaurusAsText(a), thesaurusAsText(b)},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s differs from a fresh lexicon of the same resources", name)
		}
	}
	// The dictionaries, and the split and stem of every word of the
	// vocabulary (memoised or not: a lexicon keeps its langLex while only
	// words outside the dictionary's base come and go).
	for _, la := range languages {
		lx, fx := a.langs[la.lang], b.langs[la.lang]
		if !maps.Equal(lx.dict.words, fx.dict.words) {
			t.Errorf("dictionary of %q differs", la.lang)
		}
		for w := range a.words[la.lang] {
			if !slices.Equal(lx.split(w), fx.split(w)) || la.stemWith(lx, w) != la.stemWith(fx, w) {
				t.Errorf("%q in %q: split %v stem %q, fresh %v %q", w, la.lang, lx.split(w), la.stemWith(lx, w), fx.split(w), la.stemWith(fx, w))
			}
		}
	}
	if len(a.docs) != len(b.docs) {
		t.Fatalf("%d documents, fresh %d", len(a.docs), len(b.docs))
	}
	for k, d := range a.docs {
		if f := b.docs[k]; f == nil || f.hash != d.hash || !reflect.DeepEqual(namesAsText(b, f), namesAsText(a, d)) || !reflect.DeepEqual(wordsAsText(b, f), wordsAsText(a, d)) ||
			!reflect.DeepEqual(thesAsText(b, f), thesAsText(a, d)) {
			t.Errorf("%s is analysed differently from a fresh index", k)
		}
	}
}

// TestNumbersAreTheirOwnStems: every language's stemmer leaves a number
// as it is, which lets the analysis skip the stemmer and the memo for one
// (stemWith) and keep numbers out of the vocabulary (wordsOf).
func TestNumbersAreTheirOwnStems(t *testing.T) {
	var numbers []string
	for i := range 2000 {
		numbers = append(numbers, fmt.Sprint(i), fmt.Sprintf("%04d", i), fmt.Sprint(1000003*i))
	}
	for _, la := range languages {
		for _, n := range numbers {
			if s := la.stemOf(n); s != n {
				t.Fatalf("%q stems %q to %q", la.lang, n, s)
			}
			if !isDigits(n) || la.isWord(n) {
				t.Fatalf("%q is taken for a word", n)
			}
		}
	}
	for _, w := range []string{"", "x84", "12a", "c30", "½", "٣"} {
		if isDigits(w) {
			t.Fatalf("%q is taken for a number", w)
		}
	}
}

// TestCodesKeepTheDictionary: a change whose new words are only numbers
// and codes (outside the compound dictionary's base) keeps the language's
// dictionary and memo instead of rebuilding them, and leaves the lexicon
// and the answers of a fresh index of the same resources; a later change
// bringing a word of the base rebuilds the dictionary, and still matches.
func TestCodesKeepTheDictionary(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)
	x := newIndex(t, rs)
	before := x.lex.langs[core.Swedish]
	var codes []core.Resource
	for i := range 60 {
		r := rs[i].Clone()
		r.ID = fmt.Sprint(8100000000 + i)
		r.NameSV = fmt.Sprintf("%s %d x%d", rs[i].NameSV, 700000+i, 12*i)
		codes = append(codes, r)
	}
	if err := x.Upsert(ctx, codes); err != nil {
		t.Fatal(err)
	}
	if x.lex.langs[core.Swedish] != before {
		t.Fatal("new codes rebuilt the Swedish dictionary")
	}
	if x.lex.words[core.Swedish]["x84"] == 0 {
		t.Fatal("the codes are not in the vocabulary")
	}
	// A number is no word of the vocabulary nor of any document's words
	// (its own stem, never split), yet found.
	for _, la := range languages {
		if _, ok := x.lex.words[la.lang]["700007"]; ok {
			t.Fatalf("the number 700007 is counted in the %q vocabulary", la.lang)
		}
	}
	if ws := wordsAsText(x.lex, x.lex.docs[codes[7].Key()])[core.Swedish]; slices.Contains(ws, "700007") || !slices.Contains(ws, "x84") {
		t.Fatalf("the words kept of %s: %v", codes[7].Key(), ws)
	}
	if hits, err := x.Search(ctx, core.TextQuery{Text: "700007", Lang: core.Swedish, Limit: 5}); err != nil || len(hits) == 0 || hits[0].Key != codes[7].Key() {
		t.Fatalf("700007 finds %v, %v", hits, err)
	}
	all := append(slices.Clone(rs), codes...)
	sameLexicon(t, x.lex, newIndex(t, all).lex)
	sameAnswers := func(live []core.Resource, queries ...string) {
		t.Helper()
		fresh := newIndex(t, live)
		for _, q := range queries {
			tq := core.TextQuery{Text: q, Lang: core.Swedish, Limit: 20}
			got, err := x.Search(ctx, tq)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Search(ctx, tq)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q: %v, fresh %v", q, got, want)
			}
		}
	}
	sameAnswers(all, "700007", rs[7].NameSV, "x24", "ull", "skiva")
	// Codes past a quarter of what the memo holds grow the memo (a new
	// langLex holding them), and keep the dictionary, the same one.
	var more []core.Resource
	for i := range len(before.words)/4 + 1 {
		r := rs[i%len(rs)].Clone()
		r.ID = fmt.Sprint(8300000000 + i)
		r.NameSV = fmt.Sprintf("%s k%d", r.NameSV, 900000+i)
		more = append(more, r)
	}
	if err := x.Upsert(ctx, more); err != nil {
		t.Fatal(err)
	}
	grown := x.lex.langs[core.Swedish]
	if grown == before || !grown.words["k900003"] || grown.words["700007"] {
		t.Fatal("the memo did not grow to take the codes")
	}
	if grown.dict != before.dict {
		t.Fatal("codes alone built the dictionary again")
	}
	all = append(all, more...)
	sameLexicon(t, x.lex, newIndex(t, all).lex)
	sameAnswers(all, "k900003", "700007", rs[3].NameSV, "ull", "skiva")
	// A word of the base (a new compound) rebuilds the dictionary.
	r := rs[0].Clone()
	r.ID = fmt.Sprint(8200000000)
	r.NameSV = "Skumglasblock " + r.NameSV
	if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
		t.Fatal(err)
	}
	if x.lex.langs[core.Swedish].dict == before.dict {
		t.Fatal("a new word of the base kept the old dictionary")
	}
	all = append(all, r)
	sameLexicon(t, x.lex, newIndex(t, all).lex)
	sameAnswers(all, "700007", "glasblock", "skum", rs[0].NameSV, "ull")
}

// dfAsText are a lexicon's term counts by term: the string ids they are
// kept by depend on the order the lexicon met its terms in.
func dfAsText(lex *lexicon) []map[string]int32 {
	out := make([]map[string]int32, len(lex.df))
	for i, m := range lex.df {
		out[i] = map[string]int32{}
		for id, n := range m {
			out[i][lex.strOf[id]] = n
		}
	}
	return out
}

// namesAsText are a document's name units as text: the ids behind them
// depend on the order the lexicon met its words in.
func namesAsText(lex *lexicon, d *docAnalysis) map[core.Lang][]nameUnit {
	out := map[core.Lang][]nameUnit{}
	for lang, units := range groupsOf(d.names()) {
		out[lang] = lex.nameTexts(units)
	}
	return out
}

// wordsAsText are a document's words as text, by language, sorted (the
// lexicon keeps them in the order of their ids).
func wordsAsText(lex *lexicon, d *docAnalysis) map[core.Lang][]string {
	out := map[core.Lang][]string{}
	for lang, ids := range groupsOf(d.words()) {
		for _, id := range ids {
			out[lang] = append(out[lang], lex.strOf[id])
		}
		slices.Sort(out[lang])
	}
	return out
}

// groupsOf are the groups of a part of docAnalysis.kept by language.
func groupsOf(part []uint32) map[core.Lang][]uint32 {
	out := map[core.Lang][]uint32{}
	for i := 0; i < len(part); {
		li, items, next := unitAt(part, i)
		out[analysed[li].lang] = items
		i = next
	}
	return out
}

// thesaurusAsText is a lexicon's rings by entry: how many resources list
// it and, for a ring of at most maxRing, which (sorted); string ids differ
// between lexicons, the entries do not.
func thesaurusAsText(lex *lexicon) map[string]string {
	out := map[string]string{}
	for id, r := range lex.thes.rings {
		ks := []string{}
		if r.n <= maxRing {
			for _, k := range r.keys {
				ks = append(ks, k.String())
			}
			slices.Sort(ks)
		}
		out[lex.strOf[id]] = fmt.Sprint(r.n, ks)
	}
	if len(lex.thes.lost) > 0 {
		out["lost"] = fmt.Sprint(len(lex.thes.lost))
	}
	return out
}

// thesAsText is a document's synonym entries (sorted) and name heads as text.
func thesAsText(lex *lexicon, d *docAnalysis) []string {
	var out []string
	for _, e := range d.entries() {
		out = append(out, "entry "+lex.strOf[e])
	}
	slices.Sort(out)
	hs := d.heads()
	for i := 0; i < len(hs); {
		li, ids, next := unitAt(hs, i)
		i = next
		h := "head " + string(analysed[li].lang)
		for _, id := range ids {
			h += " " + lex.strOf[id]
		}
		out = append(out, h)
	}
	return out
}
