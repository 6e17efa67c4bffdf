package blugeindex

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/analysis"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/climatesearch/climatesearch/core"
)

// tokenStream is how the terms reached bluge before analysedField: one token
// per term, a new position at each word unit.
type tokenStream []term

func (f tokenStream) Analyze([]byte) analysis.TokenStream {
	out := make(analysis.TokenStream, len(f))
	last := -1
	for i, t := range f {
		incr := 0
		if t.unit != last {
			incr = 1
			last = t.unit
		}
		out[i] = &analysis.Token{Term: []byte(t.text), PositionIncr: incr, Type: analysis.AlphaNumeric}
	}
	return out
}

// blugeDocument is a document as it was built before analysedField: bluge
// keyword fields, and text fields analysed by bluge from tokenStream.
func blugeDocument(key core.Key, d *docAnalysis) *bluge.Document {
	doc := bluge.NewDocument(key.String())
	doc.AddField(bluge.NewStoredOnlyField(fieldSource, d.source))
	doc.AddField(bluge.NewKeywordField(fieldCatalog, string(key.Catalog)))
	for _, t := range idTerms(key) {
		doc.AddField(bluge.NewKeywordField(fieldID, t))
	}
	for i, f := range textFields {
		if len(d.fields[i]) > 0 {
			doc.AddField(bluge.NewTextField(f.name, "").WithAnalyzer(tokenStream(d.fields[i])))
		}
	}
	return doc
}

// indexed is what ice takes from a document (see ice's prepareDicts and
// processDocument): per field name, its length, its terms with their
// frequencies, and how it is indexed and stored.
type indexed struct {
	length      int
	terms       map[string]int
	visits      int
	options     [3]bool
	storedValue string
}

func indexedOf(doc *bluge.Document) map[string]*indexed {
	doc.Analyze()
	out := map[string]*indexed{}
	doc.EachField(func(f segment.Field) {
		x := out[f.Name()]
		if x == nil {
			x = &indexed{terms: map[string]int{}}
			out[f.Name()] = x
		}
		x.length += f.Length()
		x.options = [3]bool{f.Index(), f.Store(), f.IndexDocValues()}
		if f.Store() {
			x.storedValue = string(f.Value())
		}
		f.EachTerm(func(ft segment.FieldTerm) {
			x.terms[string(ft.Term())] += ft.Frequency()
			x.visits++
		})
	})
	return out
}

// TestAnalysedFieldsIndexAsBlugeFields checks that every document of the
// real catalog (and of a text that repeats its words) gives ice the fields,
// terms, frequencies, lengths and stored values that bluge's own fields fed
// the same tokens give it: the segments, and so every score, are what they
// were. Each term is visited once per field, as from bluge's frequency maps.
func TestAnalysedFieldsIndexAsBlugeFields(t *testing.T) {
	rs := loadCatalog(t)
	rs = append(rs, core.Resource{ID: "rep", Catalog: core.DKBR, NameDA: "Beton beton, BETON C30/37 c30/37",
		DescriptionDA: "Betonelement af beton med armering; armering af stål, stål og atter stål."})
	target := map[core.Key]*core.Resource{}
	for i := range rs {
		target[rs[i].Key()] = &rs[i]
	}
	dl, err := newLexicon().prepare(target, func([]core.Key) (map[core.Key]*core.Resource, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	fields, repeats := 0, 0
	for k, d := range dl.next {
		got, want := indexedOf(document(k, d)), indexedOf(blugeDocument(k, d))
		if len(got) != len(want) {
			t.Errorf("%s: fields %v, bluge's %v", k, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		for name, w := range want {
			g := got[name]
			if g == nil {
				continue
			}
			if !maps.Equal(g.terms, w.terms) || g.length != w.length || g.options != w.options || g.storedValue != w.storedValue {
				t.Errorf("%s %s: %+v, bluge's %+v", k, name, *g, *w)
			}
			if g.visits != len(g.terms) {
				t.Errorf("%s %s: %d terms visited %d times", k, name, len(g.terms), g.visits)
			}
			for _, n := range g.terms {
				if n > 1 {
					repeats++
				}
			}
			fields++
		}
	}
	if fields < 2000 || repeats == 0 {
		t.Fatalf("compared %d fields with %d repeated terms: too few to say anything", fields, repeats)
	}
	t.Logf("%d fields compared, %d terms repeated within a field", fields, repeats)
}

// copies returns n copies of the real catalog under ids of their own, the
// names of every copy after the first marked with its number.
func copies(t testing.TB, n int) []core.Resource {
	rs := loadCatalog(t)
	var out []core.Resource
	for c := range n {
		for _, r := range rs {
			r.ID = fmt.Sprintf("%s-%02d", r.ID, c)
			if c > 0 {
				r.NameSV = fmt.Sprintf("%s %d", r.NameSV, c)
			}
			out = append(out, r)
		}
	}
	return out
}

// TestChangeSplitIntoSegmentsAnswersAsOne: a change large enough to be built
// as one segment per core (segmentBatches) answers the golden set exactly as
// the same resources written in changes too small to be split, after a
// second large change that renames thousands and withdraws hundreds (the
// deletions ride with the first batch).
func TestChangeSplitIntoSegmentsAnswersAsOne(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	golden := loadGolden(t)
	first := copies(t, 20) // 4,700 resources
	second := slices.Clone(first[:4400])
	for i := range second {
		second[i].NameEN = "renamed " + second[i].NameEN
	}
	var gone []core.Key
	for _, r := range first[4400:] {
		gone = append(gone, r.Key())
	}

	split, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = split.Close() })
	for _, step := range []struct {
		upsert []core.Resource
		remove []core.Key
	}{{first, nil}, {second, gone}} {
		ch, err := split.Prepare(ctx, step.upsert, step.remove)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(ch.(*change).batches); n != 2 {
			t.Fatalf("a change of %d documents on 4 cores is %d batches, want 2", len(step.upsert), n)
		}
		if err := ch.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	small, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = small.Close() })
	for _, rs := range [][]core.Resource{first, second} {
		for i := 0; i < len(rs); i += minSegmentDocs / 2 {
			if err := small.Upsert(ctx, rs[i:min(len(rs), i+minSegmentDocs/2)]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := small.Remove(ctx, gone); err != nil {
		t.Fatal(err)
	}

	want := answers(t, small, golden)
	if got := answers(t, split, golden); !slices.Equal(got, want) {
		t.Fatalf("answers of the split changes differ from the small ones:\n%v\nwant\n%v", got[:min(10, len(got))], want[:min(10, len(want))])
	}
	if len(want) < len(golden) {
		t.Fatalf("only %d hits for %d golden queries", len(want), len(golden))
	}
	// A withdrawn resource's own name finds its live copies, never it.
	isGone := map[core.Key]bool{}
	for _, k := range gone {
		isGone[k] = true
	}
	for _, r := range []core.Resource{first[4400], first[4650]} {
		hits := search(t, split, core.TextQuery{Text: r.NameSV, Lang: core.Swedish, Limit: 50})
		if len(hits) < 10 {
			t.Errorf("%q finds %d resources, want its live copies", r.NameSV, len(hits))
		}
		for _, h := range hits {
			if isGone[h.Key] {
				t.Errorf("%q finds withdrawn %s", r.NameSV, h.Key)
			}
		}
	}
}
