package embedder

import (
	"context"
	"math"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/ports"
)

// HashID is the ID of the hash embedder. The version goes up whenever the
// features, the folding or the hashing change, so stored vectors are rebuilt.
const HashID = "hash-ngram-v1-320"

// Hash is the offline embedder: feature hashing of character n-grams. It is
// lexical, not semantic; see the package comment for what that buys.
//
// A text is lower-cased and split into words at every rune that is neither
// a letter nor a digit. Each word contributes itself and the character
// 3-, 4- and 5-grams of "<word>" (the angle brackets mark the word's edges,
// so prefixes and suffixes count as such). Each feature is hashed with
// 64-bit FNV-1a (then a finaliser, as FNV's low bits mix poorly) into one of
// 320 buckets with a sign taken from another bit, so collisions cancel out
// on average instead of piling up. A feature seen n times weighs 1+ln(n):
// a word repeated in a long description must not drown the rest. The sum is
// L2-normalised.
//
// Folding keeps å, ä and ö apart from a and o: they are letters of their
// own in Swedish, and folding them would merge e.g. får and far, or
// bröd and brod. Danish æ and ø become ä and ö, the same letters in Swedish
// spelling, so Danish and Swedish names meet (træ, trä). Other accents are
// dropped (é to e, ü to u), ß becomes ss, ² and ³ become 2 and 3 (m³, m3),
// decomposed letters (a + combining ring) are composed first, and the
// invisible characters the publisher's texts carry (soft hyphens,
// zero-width spaces) are ignored rather than splitting a word.
//
// Documents and queries use the same function. The zero value is ready to
// use and safe for concurrent use.
type Hash struct{}

// NewHash returns the hash embedder.
func NewHash() *Hash { return &Hash{} }

// ID implements ports.Embedder.
func (*Hash) ID() string { return HashID }

// Dim implements ports.Embedder.
func (*Hash) Dim() int { return ports.EmbeddingDim }

// EmbedQuery implements ports.Embedder.
func (h *Hash) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return h.Embed(text), nil
}

// EmbedDocuments implements ports.Embedder.
func (h *Hash) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		// A whole catalog is a few thousand texts: checking now and then
		// keeps a cancelled ingest from running on.
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = h.Embed(t)
	}
	return out, nil
}

// Embed returns the vector of text: L2-normalised, or all zeros when the
// text has no letters or digits.
func (*Hash) Embed(text string) []float32 {
	f := featurizers.Get().(*featurizer)
	defer featurizers.Put(f)
	f.reset()
	f.text(text)

	var sum [ports.EmbeddingDim]float64
	feats := f.feats
	slices.Sort(feats)
	for i := 0; i < len(feats); {
		j := i + 1
		for j < len(feats) && feats[j] == feats[i] {
			j++
		}
		w := 1 + math.Log(float64(j-i))
		m := feats[i]
		if m>>63 != 0 {
			w = -w
		}
		sum[(m&(1<<63-1))%ports.EmbeddingDim] += w
		i = j
	}
	return normalized(sum[:])
}

// normalized returns v scaled to unit length as float32, or a zero vector
// when v has no length.
func normalized(v []float64) []float32 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

var featurizers = sync.Pool{New: func() any { return new(featurizer) }}

// featurizer collects the hashed features of one text; pooled so embedding
// a catalog does not allocate per word.
type featurizer struct {
	word  []rune   // the current word, folded
	pad   []rune   // "<word>"
	feats []uint64 // mixed hashes of every feature, repeats included
}

func (f *featurizer) reset() {
	f.word, f.pad, f.feats = f.word[:0], f.pad[:0], f.feats[:0]
}

func (f *featurizer) text(s string) {
	for _, r := range s {
		switch {
		case invisible(r):
			continue
		case r >= '\u0300' && unicode.Is(unicode.Mn, r):
			f.combine(r)
			continue
		}
		if r = unicode.ToLower(r); unicode.IsLetter(r) || unicode.IsNumber(r) {
			f.word = appendFolded(f.word, r)
		} else {
			f.flush()
		}
	}
	f.flush()
}

// combine applies a combining mark to the last letter of the word: a ring
// or diaeresis makes å, ä, ö (the text was decomposed, NFD); any other
// mark is an accent and is dropped, as precomposed accents are.
func (f *featurizer) combine(mark rune) {
	n := len(f.word)
	if n == 0 {
		return
	}
	switch prev := f.word[n-1]; {
	case mark == '\u030a' && prev == 'a':
		f.word[n-1] = 'å'
	case mark == '\u0308' && prev == 'a':
		f.word[n-1] = 'ä'
	case mark == '\u0308' && prev == 'o', (mark == '\u0338' || mark == '\u0337') && prev == 'o':
		f.word[n-1] = 'ö'
	}
}

// flush turns the current word into features.
func (f *featurizer) flush() {
	if len(f.word) == 0 {
		return
	}
	h := feed(fnvOffset, 'w')
	for _, r := range f.word {
		h = feed(h, r)
	}
	f.feats = append(f.feats, mix(h))

	f.pad = append(append(append(f.pad[:0], '<'), f.word...), '>')
	p := f.pad
	for i := range p {
		h := feed(fnvOffset, 'g')
		for j := i; j < len(p) && j < i+maxGram; j++ {
			h = feed(h, p[j])
			if j-i+1 >= minGram {
				f.feats = append(f.feats, mix(h))
			}
		}
	}
	f.word = f.word[:0]
}

const (
	minGram   = 3
	maxGram   = 5
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// feed adds the UTF-8 bytes of r to an FNV-1a hash.
func feed(h uint64, r rune) uint64 {
	if r < utf8.RuneSelf {
		return (h ^ uint64(r)) * fnvPrime
	}
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	for _, c := range b[:n] {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// mix is the MurmurHash3 finaliser: every output bit depends on every input
// bit, so the bucket (low bits) and the sign (top bit) are independent.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// invisible are the characters core.CleanText removes: they carry no
// content and must not split a word.
func invisible(r rune) bool {
	switch r {
	case '\u00ad', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return false
}

// appendFolded appends the folded form of the lower-case rune r.
func appendFolded(w []rune, r rune) []rune {
	switch r {
	case 'å', 'ä', 'ö':
		return append(w, r)
	case 'æ':
		return append(w, 'ä')
	case 'ø':
		return append(w, 'ö')
	case 'à', 'á', 'â', 'ã', 'ā':
		return append(w, 'a')
	case 'ç', 'č':
		return append(w, 'c')
	case 'è', 'é', 'ê', 'ë', 'ē', 'ę':
		return append(w, 'e')
	case 'ì', 'í', 'î', 'ï':
		return append(w, 'i')
	case 'ñ', 'ń':
		return append(w, 'n')
	case 'ò', 'ó', 'ô', 'õ', 'ō':
		return append(w, 'o')
	case 'ù', 'ú', 'û', 'ü':
		return append(w, 'u')
	case 'ý', 'ÿ':
		return append(w, 'y')
	case 'š':
		return append(w, 's')
	case 'ž':
		return append(w, 'z')
	case 'ß':
		return append(w, 's', 's')
	case '²':
		return append(w, '2')
	case '³':
		return append(w, '3')
	}
	return append(w, r)
}
