package blugeindex

import (
	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/analysis"
	segment "github.com/blugelabs/bluge_segment_api"
)

// termFreq is a term of a field and how many times the field holds it.
type termFreq struct {
	text string
	n    int32
}

// analysedField is a field of a bluge document whose terms this package has
// already analysed: ice reads each distinct term and its frequency straight
// from the analysis. A bluge TermField with an analyzer would first turn the
// terms into a token each (a copy of every term's bytes) and then count them
// into a map per field, which ice counts into a map of its own again: a
// sixth of what a bulk load allocates, for nothing this index uses (no term
// positions, no stored or doc values of text fields).
type analysedField struct {
	name string
	// length is the number of terms, repeats included: the field length of
	// BM25's norm, as bluge's TokenFrequency would count it.
	length int
	terms  []termFreq
	// text holds the terms' bytes one after another, in the order of terms.
	text []byte
	// ft is the value EachTerm hands out, here rather than allocated at
	// each of ice's two passes over every field.
	ft fieldTerm
}

var (
	_ bluge.Field       = (*analysedField)(nil)
	_ segment.FieldTerm = (*fieldTerm)(nil)
)

// fill sets the field to name holding terms, their bytes appended to text
// (which has room for them), and returns text with them.
func (f *analysedField) fill(name string, length int, terms []termFreq, text []byte) []byte {
	at := len(text)
	for _, t := range terms {
		text = append(text, t.text...)
	}
	*f = analysedField{name: name, length: length, terms: terms, text: text[at:len(text):len(text)]}
	return text
}

// termBytes is the length of the terms' texts together.
func termBytes(terms []termFreq) int {
	n := 0
	for _, t := range terms {
		n += len(t.text)
	}
	return n
}

func (f *analysedField) Name() string         { return f.name }
func (f *analysedField) Length() int          { return f.length }
func (f *analysedField) Value() []byte        { return nil }
func (f *analysedField) Index() bool          { return true }
func (f *analysedField) Store() bool          { return false }
func (f *analysedField) IndexDocValues() bool { return false }

// EachTerm visits each distinct term once. The bytes it hands out are the
// field's own (ice keeps them until the segment is built) and the visited
// value is reused, which ice allows: it copies the term and frequency.
func (f *analysedField) EachTerm(vt segment.VisitTerm) {
	ft := &f.ft
	at := 0
	for _, t := range f.terms {
		ft.term = f.text[at : at+len(t.text) : at+len(t.text)]
		ft.freq = int(t.n)
		at += len(t.text)
		vt(ft)
	}
}

// Analyze has nothing to do: the terms are analysed. Positions are not
// indexed, so the offset passes through.
func (f *analysedField) Analyze(startOffset int) int { return startOffset }

// AnalyzedTokenFrequencies is only read by composite fields, which this
// index does not use.
func (f *analysedField) AnalyzedTokenFrequencies() analysis.TokenFrequencies { return nil }

func (f *analysedField) PositionIncrementGap() int { return 0 }

// Size is what bluge's memory accounting counts for the field.
func (f *analysedField) Size() int { return 64 + len(f.text) + 24*len(f.terms) }

// fieldTerm is one term of an analysedField as ice reads it.
type fieldTerm struct {
	term []byte
	freq int
}

func (t *fieldTerm) Term() []byte                       { return t.term }
func (t *fieldTerm) Frequency() int                     { return t.freq }
func (t *fieldTerm) EachLocation(segment.VisitLocation) {}
