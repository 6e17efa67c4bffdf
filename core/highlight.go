package core

import (
	"html"
	"sort"
	"strings"
)

// MarkSpans returns text HTML-escaped with the spans (byte ranges of text)
// wrapped in <mark>…</mark>. Overlapping or adjacent spans merge; spans
// outside the text are ignored.
func MarkSpans(text string, spans []Span) string {
	if text == "" {
		return ""
	}
	ss := make([]Span, 0, len(spans))
	for _, s := range spans {
		if s.Start >= 0 && s.End <= len(text) && s.Start < s.End {
			ss = append(ss, s)
		}
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].Start < ss[j].Start })
	var b strings.Builder
	at := 0
	for i := 0; i < len(ss); {
		s := ss[i]
		for i++; i < len(ss) && ss[i].Start <= s.End; i++ {
			s.End = max(s.End, ss[i].End)
		}
		if s.Start < at {
			s.Start = at
		}
		b.WriteString(html.EscapeString(text[at:s.Start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(text[s.Start:s.End]))
		b.WriteString("</mark>")
		at = s.End
	}
	b.WriteString(html.EscapeString(text[at:]))
	return b.String()
}
