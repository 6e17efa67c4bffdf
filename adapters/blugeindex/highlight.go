package blugeindex

import (
	"context"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// Highlight returns, for each text, the byte spans of the words the query
// matches: the text is cut and analysed like a document (each language's
// stop words, stems, compound parts, codes written together) and a word is
// marked when one of its terms is a term of the analysed query (a word as
// typed, a compound part of it, or a close spelling). A word matched
// through one of its compound parts has only that part marked
// (spån|skiva for "spån"). Terms the thesaurus adds are not marked: the
// query did not name them.
func (x *Index) Highlight(_ context.Context, q core.TextQuery, texts []string) ([][]core.Span, error) {
	out := make([][]core.Span, len(texts))
	text := core.CleanText(q.Text)
	if text == "" {
		return out, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.writer == nil {
		return nil, ErrClosed
	}
	lex := x.lex
	tq := analyzeQuery(text, lex)
	for i, t := range texts {
		out[i] = highlightSpans(t, tq, lex)
	}
	return out, nil
}

// highlightSpans marks the words of text that the analysed query matches.
func highlightSpans(text string, tq *textQuery, lex *lexicon) []core.Span {
	var spans []core.Span
	for _, pieces := range chunkSpans(text) {
		spans = append(spans, matchChunk(text, pieces, tq, lex)...)
	}
	return spans
}

// matchChunk returns the spans of one chunk the query matches: the whole
// chunk for a code written together, each matching piece, or the matching
// compound part of a piece.
func matchChunk(text string, pieces []pieceSpan, tq *textQuery, lex *lexicon) []core.Span {
	whole := core.Span{Start: pieces[0].start, End: pieces[len(pieces)-1].end}
	var spans []core.Span
	marked := make([]bool, len(pieces))
	for _, la := range analysed {
		q := tq.byLang[la.lang]
		if q == nil || len(q.weights) == 0 {
			continue
		}
		lx := lex.langs[la.lang]
		hit := func(w string) bool {
			t := la.stemWith(lx, w)
			return q.exact[t] || q.fuzzy[t]
		}
		if len(pieces) > 1 {
			joined := make([]string, len(pieces))
			for i, p := range pieces {
				joined[i] = p.text
			}
			if hit(strings.Join(joined, "")) {
				return []core.Span{whole}
			}
		}
		for i, p := range pieces {
			if marked[i] || la.isStop(p.text) {
				continue
			}
			if hit(p.text) {
				marked[i] = true
				spans = append(spans, core.Span{Start: p.start, End: p.end})
				continue
			}
			parts := lx.split(p.text)
			if lp := letterPrefix(p.text); lp != "" && la.stem != nil {
				parts = append(parts, lp)
			}
			for _, part := range parts {
				if !hit(part) {
					continue
				}
				if sp, ok := partSpan(text, p, part); ok {
					spans = append(spans, sp)
				} else {
					marked[i] = true
					spans = append(spans, core.Span{Start: p.start, End: p.end})
					break
				}
			}
		}
	}
	return spans
}

// partSpan locates a compound part inside its piece. Lower-casing may change
// byte lengths of some letters; then the part is not located (the caller
// marks the whole piece).
func partSpan(text string, p pieceSpan, part string) (core.Span, bool) {
	if len(p.text) != p.end-p.start {
		return core.Span{}, false
	}
	at := strings.Index(p.text, part)
	if at < 0 {
		return core.Span{}, false
	}
	return core.Span{Start: p.start + at, End: p.start + at + len(part)}, true
}
