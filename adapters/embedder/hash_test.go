package embedder

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.Embedder = (*Hash)(nil)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(cosine(v, v)) }

func TestHashIsDeterministicAndNormalised(t *testing.T) {
	h := NewHash()
	if h.ID() != "hash-ngram-v1-320" || h.Dim() != 320 {
		t.Fatalf("ID %q, Dim %d", h.ID(), h.Dim())
	}
	for _, text := range []string{"glasull", "Spånskivor är gjorda av träspån", "a", "Beton C30/37, 2400 kg/m³", strings.Repeat("isolering ", 200)} {
		a, b := h.Embed(text), (&Hash{}).Embed(text)
		if len(a) != 320 {
			t.Fatalf("%q: %d dimensions", text, len(a))
		}
		if !slices.Equal(a, b) {
			t.Errorf("%q: two embeddings differ", text)
		}
		if n := norm(a); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: norm %v, want 1", text, n)
		}
	}
}

// TestHashVectorsArePinned fails when the features, folding or hashing
// change: bump HashID then (and update pinned), so stored vectors are rebuilt
// instead of mixed with new ones.
func TestHashVectorsArePinned(t *testing.T) {
	const pinned = "21:+0.1992 37:+0.1176 49:-0.1992 66:-0.1992 69:-0.1176 72:-0.2353 94:+0.1176 95:+0.1992 121:-0.1176 " +
		"130:+0.1992 136:+0.1176 138:+0.1992 153:-0.3168 158:-0.1176 170:+0.1992 179:-0.1176 190:+0.1992 194:-0.1992 " +
		"202:-0.1176 205:+0.1176 214:+0.1176 235:-0.1992 244:+0.1176 245:-0.1992 250:-0.1176 257:+0.1176 260:+0.1992 " +
		"262:+0.1992 272:-0.1176 279:+0.1176 291:-0.1992 299:+0.1176 301:+0.1992 304:+0.1176 317:+0.1176"
	var b strings.Builder
	for i, x := range NewHash().Embed("Træull, TRÄULL och glas m³") {
		if x != 0 {
			fmt.Fprintf(&b, "%d:%+.4f ", i, x)
		}
	}
	if got := strings.TrimSpace(b.String()); got != pinned {
		t.Errorf("the hash embedder's vectors changed; bump HashID and pin\n%s", got)
	}
}

func TestHashZeroVectorForTextWithoutWords(t *testing.T) {
	h := NewHash()
	for _, text := range []string{"", "   ", "-- / !", "\u00ad\u200b"} {
		v := h.Embed(text)
		if len(v) != 320 || norm(v) != 0 {
			t.Errorf("%q: want a 320-long zero vector, got norm %v", text, norm(v))
		}
	}
}

func TestHashSimilarSpellingsAreCloser(t *testing.T) {
	h := NewHash()
	sim := func(a, b string) float64 { return cosine(h.Embed(a), h.Embed(b)) }
	cases := []struct{ q, near, far string }{
		{"glasull", "glassull", "betong"},
		{"glasull", "mineralull glasull", "betong"},
		{"spånskiva", "spånskivor", "stålbalk"},
		{"betong", "beton", "gips"},
		{"isolering", "isoleringsskiva", "takpapp"},
	}
	for _, c := range cases {
		if n, f := sim(c.q, c.near), sim(c.q, c.far); n <= f {
			t.Errorf("sim(%q,%q)=%.3f must exceed sim(%q,%q)=%.3f", c.q, c.near, n, c.q, c.far, f)
		}
	}
	if s := sim("glasull", "glassull"); s < 0.5 {
		t.Errorf("a one-letter typo should stay close, got %.3f", s)
	}
}

func TestHashFolding(t *testing.T) {
	h := NewHash()
	same := [][2]string{
		{"GLASULL", "glasull"},
		{"træ", "trä"},       // Danish æ is Swedish ä
		{"død", "död"},       // Danish ø is Swedish ö
		{"tra\u0308", "trä"}, // decomposed (NFD) input
		{"spa\u030anskiva", "spånskiva"},
		{"glas\u00adull", "glasull"}, // soft hyphen does not split the word
		{"café", "cafe"},
		{"m³", "m3"},
		{"glasull, isolering", "glasull isolering"},
	}
	for _, p := range same {
		if !slices.Equal(h.Embed(p[0]), h.Embed(p[1])) {
			t.Errorf("%q and %q should embed alike", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"får", "far"}, {"bröd", "brod"}, {"ärm", "arm"}} {
		if slices.Equal(h.Embed(p[0]), h.Embed(p[1])) {
			t.Errorf("%q and %q must stay apart: å, ä, ö are letters of their own", p[0], p[1])
		}
	}
}

func TestHashEmbedDocumentsAndQueryAgree(t *testing.T) {
	h := NewHash()
	texts := []string{"glasull", "", "betong"}
	vs, err := h.EmbedDocuments(context.Background(), texts)
	if err != nil || len(vs) != 3 {
		t.Fatalf("EmbedDocuments: %d vectors, %v", len(vs), err)
	}
	for i, text := range texts {
		q, err := h.EmbedQuery(context.Background(), text)
		if err != nil || !slices.Equal(q, vs[i]) {
			t.Errorf("%q: query and document vectors differ (%v)", text, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.EmbedDocuments(ctx, texts); err == nil {
		t.Error("a cancelled context must stop EmbedDocuments")
	}
}

// description is 300 characters, the length of a typical resource text.
var description = strings.Repeat("Mineralullsskiva av glasull för isolering av väggar och tak, densitet 16 kg/m³. ", 4)[:300]

func BenchmarkHashEmbed300(b *testing.B) {
	h := NewHash()
	b.SetBytes(int64(len(description)))
	b.ReportAllocs()
	for b.Loop() {
		h.Embed(description)
	}
}
