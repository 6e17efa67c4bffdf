package core

import (
	"strings"
	"unicode/utf8"
)

// maxEmbedText bounds the text embedded per resource; names and synonyms
// come first so they are never cut.
const maxEmbedText = 2000

// EmbeddingText is the text a resource's vector is computed from: names in
// every language, synonyms, category, then applicability and descriptions.
func EmbeddingText(r *Resource) string {
	var b strings.Builder
	for _, s := range []string{r.NameSV, r.NameEN, r.NameDA, r.NameDE, r.Synonyms, r.SynonymsEN, r.Category, r.CategoryEN,
		r.ApplicabilitySV, r.ApplicabilityEN, r.DescriptionSV, r.DescriptionEN, r.DescriptionDA} {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(". ")
		}
		b.WriteString(s)
		if b.Len() >= maxEmbedText {
			break
		}
	}
	out := b.String()
	if len(out) > maxEmbedText {
		out = out[:maxEmbedText]
		for !utf8.ValidString(out) { // do not leave half a character
			out = out[:len(out)-1]
		}
	}
	return out
}
