package blugeindex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blugelabs/bluge/analysis"
	"github.com/blugelabs/bluge/analysis/lang/da"
	"github.com/blugelabs/bluge/analysis/lang/en"
	"github.com/blugelabs/bluge/analysis/lang/sv"

	"github.com/climatesearch/climatesearch/core"
)

// The analysis of this package is its own rather than a bluge analyzer chain
// because it needs the catalog's vocabulary (the compound dictionary), marks
// what each term is (a word, a compound part, a code written together), and
// must treat index and query text exactly alike. bluge receives the finished
// terms (see analysedField).
//
// The pipeline of one text in one language:
//
//  1. Chunks: runs of letters and digits, where pieces glued by a connector
//     without spaces ("C30/37", "KL-trä", "42,5", "mono-Si", "3-glas") stay
//     one chunk. Everything else ("%", brackets, spaces, commas between
//     words) separates chunks, so "97 %" and "97%" both give 97.
//  2. Lower case; stop words of the language are dropped.
//  3. Terms of a chunk: each piece (c30, 37), and for a chunk of several
//     pieces the pieces joined (c3037), so a code matches as written
//     ("C30/37"), spaced ("C30 37") and joined ("C3037").
//  4. Compound parts: a word of the language is split into words of the
//     catalog's own vocabulary (glasull -> glas + ull, armeringsstål ->
//     armering + stål); the whole word stays a term too, so an exact match
//     still scores more. The letters opening an alphanumeric piece
//     (HVO100 -> hvo) are a part as well.
//  5. Every term is stemmed with the language's Snowball stemmer.

// termKind tells what a term stands for.
type termKind uint8

const (
	// kindWord is a word, or one piece of a code.
	kindWord termKind = iota
	// kindJoined is a code's pieces written together, or (query only) two
	// adjacent query words that the catalog writes as one word.
	kindJoined
	// kindPart is a part of a compound word, or the letters that open an
	// alphanumeric piece.
	kindPart
)

// term is one analysed term of a text. unit numbers the chunks of the text
// that produced terms: the word units a name coverage counts.
type term struct {
	text string
	unit int
	kind termKind
}

// chunk is a word or a code: pieces of letters and digits glued by
// connectors without spaces.
type chunk struct {
	pieces []string // lower case
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf { // ASCII, most of every text: no table look-ups
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r)
}

// isConnector tells whether r glues the pieces on either side into one chunk.
func isConnector(r rune) bool {
	switch r {
	case '-', '/', '.', ',', '\'', '’', '+', '&', '_', '\u2010', '\u2011', '\u2013':
		return true
	}
	return false
}

// splitChunks cuts text into chunks. A connector glues only when a word
// character is on both sides: "Sandwich-" or "a / b" do not glue. An
// English possessive ("Falu's") loses its s.
//
// Every resource's every field goes through here, so the pieces of all
// chunks share one slice (each chunk a capped window of it) instead of a
// slice per chunk.
func splitChunks(text string) []chunk {
	// The text is lower-cased once, and each piece is a window of it,
	// unless lower case moves some character's bytes (then each piece is
	// lower-cased on its own): a piece lower-cased alone was an allocation
	// per capitalised word, with the slices' growth the most allocations
	// of any step of the analysis in a bulk load (docs/PERFORMANCE.md
	// 12zb). Both slices are sized from the text's length (bytesPerChunk, bytesPerPiece).
	out, _ := appendChunks(make([]chunk, 0, len(text)/bytesPerChunk+1), make([]string, 0, len(text)/bytesPerPiece+1), text)
	return out
}

// A text has about a piece per bytesPerPiece bytes and a chunk per
// bytesPerChunk: what the slices of its chunks and pieces are sized by.
const (
	bytesPerPiece = 6
	bytesPerChunk = 8
)

// appendChunks appends the chunks of text to out and their pieces to
// pieces (see splitChunks), so that the fields of one resource share two
// slices.
func appendChunks(out []chunk, pieces []string, text string) ([]chunk, []string) {
	low, aligned := lowerInPlace(text)
	from := len(pieces)
	walkChunks(text, func(start, end int) {
		if aligned {
			pieces = append(pieces, low[start:end])
		} else {
			pieces = append(pieces, strings.ToLower(text[start:end]))
		}
	}, func() {
		out = append(out, chunk{pieces: pieces[from:len(pieces):len(pieces)]})
		from = len(pieces)
	})
	return out, pieces
}

// lowerInPlace returns text in lower case and whether every character
// kept its place in it (its lower case is as many bytes), so that a byte
// range of text is the same range of the lower-cased text. It is not so
// for a few characters (the Kelvin sign, the dotted I, invalid bytes).
func lowerInPlace(text string) (string, bool) {
	low := strings.ToLower(text)
	if len(low) != len(text) {
		return low, false
	}
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError || utf8.RuneLen(unicode.ToLower(r)) != size {
			return low, false
		}
		i += size
	}
	return low, true
}

// pieceSpan is a piece of a chunk with its byte range in the text.
type pieceSpan struct {
	start, end int
	text       string // lower case
}

// chunkSpans cuts text into chunks (see splitChunks), keeping where each
// piece is, so the highlighter marks exactly what the index analysed.
func chunkSpans(text string) [][]pieceSpan {
	var out [][]pieceSpan
	var pieces []pieceSpan
	walkChunks(text, func(start, end int) {
		pieces = append(pieces, pieceSpan{start, end, strings.ToLower(text[start:end])})
	}, func() {
		out = append(out, pieces)
		pieces = nil
	})
	return out
}

// walkChunks calls piece with the byte range of every piece of text, in
// order, and flush after the last piece of each chunk.
func walkChunks(text string, piece func(start, end int), flush func()) {
	open := false // a piece was given since the last flush
	start := -1
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			i += size
			continue
		}
		if start >= 0 {
			piece(start, i)
			open = true
			start = -1
			rest := text[i+size:]
			if (r == '\'' || r == '’') && isPossessive(rest) {
				flush()
				open = false
				i += size + 1
				continue
			}
			if next, _ := utf8.DecodeRuneInString(rest); isConnector(r) && isWordRune(next) {
				i += size
				continue
			}
		}
		if open {
			flush()
			open = false
		}
		i += size
	}
	if start >= 0 {
		piece(start, len(text))
		open = true
	}
	if open {
		flush()
	}
}

// isPossessive tells whether rest (the text after an apostrophe) is a lone s.
func isPossessive(rest string) bool {
	if len(rest) == 0 || (rest[0] != 's' && rest[0] != 'S') {
		return false
	}
	next, _ := utf8.DecodeRuneInString(rest[1:])
	return len(rest) == 1 || !isWordRune(next)
}

// language is the analysis of one language.
type language struct {
	lang  core.Lang
	stop  analysis.TokenMap
	stem  analysis.TokenFilter
	links []string // linking morphemes allowed between compound parts
	// suffixes are inflection and derivation endings, never compound heads.
	suffixes map[string]bool
	// induceModifiers lets the compound dictionary learn left parts.
	induceModifiers bool
}

// languages are the analysed languages; Swedish and Danish glue compound
// parts with an s (konstruktion-s-stål), English writes few compounds
// (glasswool, plasterboard) and never links them.
var languages = []*language{
	{
		lang: core.Swedish, stop: withStop(sv.StopWords(), "ca", "cirka", "dvs", "etc", "exkl", "fler", "inkl", "mer", "mm", "samt", "även"), stem: sv.StemmerFilter(), links: []string{"s"},
		suffixes: set("ad", "ade", "ande", "ar", "are", "arna", "as", "ast", "aste", "at", "en", "ende", "ens",
			"er", "era", "erad", "erade", "erat", "ering", "eringen", "erna", "ers", "et", "ets", "ell", "ella",
			"ellt", "else", "het", "heten", "ig", "iga", "igt", "ing", "ingar", "ingen", "isk", "iska", "iskt",
			"lig", "liga", "ligt", "ning", "ningar", "ningen", "or", "orna", "tion", "ioner"),
		induceModifiers: true,
	},
	{
		lang: core.English, stop: withStop(en.StopWords(), "approx", "etc", "excl", "incl"), stem: en.StemmerFilter(),
		suffixes: set("able", "ation", "ations", "ed", "ence", "er", "ers", "es", "ful", "ies", "ing", "ings",
			"ism", "ist", "ity", "ive", "ize", "ise", "led", "less", "ly", "ment", "ments", "ness", "ous", "ure"),
	},
	{
		lang: danish, stop: withStop(da.StopWords(), "ca", "ekskl", "etc", "inkl", "mv"), stem: da.StemmerFilter(), links: []string{"s", "e"},
		suffixes: set("ede", "ende", "ene", "er", "erne", "eret", "erede", "else", "hed", "heden", "ing", "inger",
			"isk", "iske", "lig", "lige", "ning", "ningen", "tion"),
		induceModifiers: true,
	},
}

// withStop adds abbreviations and quantity words that say nothing about a
// product to a stop list.
func withStop(m analysis.TokenMap, ws ...string) analysis.TokenMap {
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// exactLanguage analyses the exact field: words as written (lower case), no
// stemming, no compound parts, the stop words of every language dropped.
var exactLanguage = &language{lang: exact, stop: func() analysis.TokenMap {
	m := analysis.TokenMap{}
	for _, la := range languages {
		for w := range la.stop {
			m[w] = true
		}
	}
	return m
}()}

// analysed lists the analyses a query goes through: each language and the
// exact words.
var analysed = append(append([]*language(nil), languages...), exactLanguage)

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func languageOf(l core.Lang) *language {
	for _, la := range analysed {
		if la.lang == l {
			return la
		}
	}
	return nil
}

// stemOf stems one lower-case word.
func (la *language) stemOf(w string) string {
	if la.stem == nil {
		return w
	}
	tok := analysis.Token{Term: []byte(w)}
	out := la.stem.Filter(analysis.TokenStream{&tok})
	if len(out) == 0 {
		return w
	}
	return string(out[0].Term)
}

// isStop tells whether w is a stop word of the language.
func (la *language) isStop(w string) bool { return la.stop[w] }

// isWord tells whether a piece is one of a text's words (docWords): not a
// stop word, not a number.
func (la *language) isWord(p string) bool { return !isDigits(p) && !la.isStop(p) }

// isDigits tells whether w is a number: ASCII digits only. A number is
// its own stem and never a compound, so it is no word of the lexicon's
// vocabulary (wordsOf): a million-row file's numbers were most of it, and
// of its memo.
func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// isLetters tells whether w holds letters only.
func isLetters(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) {
			return false
		}
	}
	return w != ""
}

// letterPrefix returns the letters that open an alphanumeric piece, when
// they are at least minLetterPrefix long and digits follow: hvo100 -> hvo.
func letterPrefix(w string) string {
	for i, r := range w {
		if !unicode.IsLetter(r) {
			if utf8.RuneCountInString(w[:i]) >= minLetterPrefix && unicode.IsDigit(r) {
				return w[:i]
			}
			return ""
		}
	}
	return ""
}

const minLetterPrefix = 3

// langLex is what the lexicon knows of one language: its compound
// dictionary, and the stems and splits of the catalog's words computed
// once. The stems and splits are a memo: split and stemWith compute a word
// they lack as newLangLex would have, so a langLex stays in use while the
// words that come and go cannot change the dictionary (see
// lexicon.prepare), and its memo then lacks them.
type langLex struct {
	words map[string]bool // the words memoised: the catalog's when built
	dict  *compoundDict
	// stems holds the stems of the dictionary's words and of the memoised
	// words a stemmer changes: a word of words missing here is its own
	// stem (numbers and codes, most of a large catalog's vocabulary, would
	// otherwise each hold an entry mapping them to themselves).
	stems map[string]string
	// splits holds the compound parts of the memoised words (nil: none).
	splits map[string][]string
}

// stem returns w's stem when lx memoises it.
func (lx *langLex) stem(w string) (string, bool) {
	if s, ok := lx.stems[w]; ok {
		return s, true
	}
	if lx.words[w] {
		return w, true
	}
	return "", false
}

// split returns the compound parts of w, from the lexicon's splits when it
// knows w.
func (lx *langLex) split(w string) []string {
	if lx == nil {
		return nil
	}
	if parts, ok := lx.splits[w]; ok || lx.words[w] {
		return parts
	}
	return lx.dict.split(w)
}

// stemWith stems w, from the lexicon's stems when it knows w. A number is
// its own stem: no stemmer's suffix holds a digit only.
func (la *language) stemWith(lx *langLex, w string) string {
	if isDigits(w) {
		return w
	}
	if lx != nil {
		if s, ok := lx.stem(w); ok {
			return s
		}
	}
	return la.stemOf(w)
}

// analyze turns text into terms of the language. lx brings the compound
// dictionary (nil: no compound splitting).
func (la *language) analyze(text string, lx *langLex) []term {
	return la.analyzeChunks(splitChunks(text), lx)
}

// analyzeChunks analyses text already cut into chunks.
func (la *language) analyzeChunks(chunks []chunk, lx *langLex) []term {
	n := 0 // a term per piece and per code; compound parts grow it
	for _, c := range chunks {
		n += len(c.pieces)
		if len(c.pieces) > 1 {
			n++
		}
	}
	var out []term
	if n > 0 {
		out = make([]term, 0, n)
	}
	unit := 0
	for _, c := range chunks {
		stops := 0
		for _, p := range c.pieces {
			if la.isStop(p) {
				stops++
			}
		}
		if stops == len(c.pieces) {
			continue
		}
		if len(c.pieces) > 1 {
			out = append(out, term{text: la.stemWith(lx, strings.Join(c.pieces, "")), unit: unit, kind: kindJoined})
		}
		for _, p := range c.pieces {
			if stops > 0 && la.isStop(p) {
				continue
			}
			out = append(out, term{text: la.stemWith(lx, p), unit: unit, kind: kindWord})
			for _, part := range lx.split(p) {
				out = append(out, term{text: la.stemWith(lx, part), unit: unit, kind: kindPart})
			}
			if lp := letterPrefix(p); lp != "" && la.stem != nil {
				out = append(out, term{text: la.stemWith(lx, lp), unit: unit, kind: kindPart})
			}
		}
		unit++
	}
	if len(out) == 0 {
		return nil // as before: no terms is nil, not empty
	}
	return out
}
