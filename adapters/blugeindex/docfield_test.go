package blugeindex

import (
	"maps"
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

// TestAnalysedFieldsIndexAsBlugeTokens checks that every text field of the
// real catalog (and of a text that repeats its words) gives ice the terms,
// frequencies and length a bluge text field fed the same tokens gives it:
// the segments, and so every score, are what they were.
func TestAnalysedFieldsIndexAsBlugeTokens(t *testing.T) {
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
		for i, f := range textFields {
			if len(d.fields[i]) == 0 {
				continue
			}
			ref := bluge.NewTextField(f.name, "").WithAnalyzer(tokenStream(d.fields[i]))
			ref.Analyze(0)
			want := map[string]int{}
			for term, tf := range ref.AnalyzedTokenFrequencies() {
				want[term] = tf.Frequency()
			}
			got := map[string]int{}
			af := newAnalysedField(f.name, len(d.fields[i]), d.distinct[i])
			af.EachTerm(func(ft segment.FieldTerm) {
				if _, twice := got[string(ft.Term())]; twice {
					t.Errorf("%s %s: term %q visited twice", k, f.name, ft.Term())
				}
				got[string(ft.Term())] = ft.Frequency()
				if ft.Frequency() > 1 {
					repeats++
				}
			})
			if !maps.Equal(got, want) {
				t.Errorf("%s %s: terms %v, bluge's %v", k, f.name, got, want)
			}
			if af.Length() != ref.AnalyzedLength() || af.Name() != ref.Name() {
				t.Errorf("%s %s: length %d, bluge's %d", k, f.name, af.Length(), ref.AnalyzedLength())
			}
			if af.Store() || af.IndexDocValues() || !af.Index() {
				t.Errorf("%s: options differ from bluge's text field", f.name)
			}
			fields++
		}
	}
	if fields < 1000 || repeats == 0 {
		t.Fatalf("compared %d fields with %d repeated terms: too few to say anything", fields, repeats)
	}
	t.Logf("%d fields compared, %d terms repeated within a field", fields, repeats)
}
