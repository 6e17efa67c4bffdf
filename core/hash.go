package core

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sort"
	"strings"
)

// contentView is what a user would call the content of a resource. Ids, the
// release version, the source, the product-sheet link and the withdrawn mark
// are left out, so a release that only bumps its version string is not a
// change.
type contentView struct {
	NameSV, NameEN, NameDA                                 string
	DescriptionSV, DescriptionEN, DescriptionDA            string
	ApplicabilitySV, ApplicabilityEN, Synonyms, SynonymsEN string
	A1A3, A1A3Conservative, A4, A51                        *float64
	GWPUnit, Unit                                          string
	ConservativeFactor, WasteFactor, BiogenicCarbon        *float64
	ServiceLife                                            string
	Transports                                             []Transport
	Conversions                                            [][2]any // sorted pairs: map order must not matter
	Category, CategoryEN, BK04                             string
	// NameDE is omitted when empty so that adding the field changed no
	// stored hash.
	NameDE string `json:",omitempty"`
}

// ContentHash returns the hex SHA-256 of the resource's content.
func ContentHash(r *Resource) string {
	keys := make([]string, 0, len(r.Conversions))
	for k := range r.Conversions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	conv := make([][2]any, 0, len(keys))
	for _, k := range keys {
		conv = append(conv, [2]any{k, r.Conversions[k]})
	}
	v := contentView{
		NameSV: r.NameSV, NameEN: r.NameEN, NameDA: r.NameDA,
		DescriptionSV: r.DescriptionSV, DescriptionEN: r.DescriptionEN, DescriptionDA: r.DescriptionDA,
		ApplicabilitySV: r.ApplicabilitySV, ApplicabilityEN: r.ApplicabilityEN, Synonyms: r.Synonyms, SynonymsEN: r.SynonymsEN,
		A1A3: r.A1A3, A1A3Conservative: r.A1A3Conservative, A4: r.A4, A51: r.A51,
		GWPUnit: r.GWPUnit, Unit: r.Unit,
		ConservativeFactor: r.ConservativeFactor, WasteFactor: r.WasteFactor, BiogenicCarbon: r.BiogenicCarbon,
		ServiceLife: r.ServiceLife, Transports: r.Transports, Conversions: conv,
		Category: r.Category, CategoryEN: r.CategoryEN, BK04: r.BK04,
		NameDE: r.NameDE,
	}
	// Encoded straight into the hash, not into a copy of the JSON first
	// (a third of what encoding allocated in a bulk load).
	h := sha256.New()
	if err := json.NewEncoder(withoutNewline{h}).Encode(v); err != nil {
		panic(err) // cannot fail: plain strings, numbers and slices
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// withoutNewline writes to w what it is given but a final newline: the one
// json.Encoder ends a value with, which the hash of json.Marshal's bytes,
// kept by every store, never held. Compact JSON holds no other raw newline
// (strings escape theirs).
type withoutNewline struct{ w io.Writer }

func (n withoutNewline) Write(b []byte) (int, error) {
	if k := len(b); k > 0 && b[k-1] == '\n' {
		_, err := n.w.Write(b[:k-1])
		return k, err
	}
	return n.w.Write(b)
}

// invisible are characters that carry no content: zero-width spaces and
// joiners, soft hyphens and the byte-order mark. The publisher's texts carry
// some; they would split or glue words for a tokenizer and for a reader.
var invisibleRunes = []rune{'\u200b', '\u200c', '\u200d', '\u00ad', '\ufeff', '\u2060'}

var invisible = func() *strings.Replacer {
	var pairs []string
	for _, r := range invisibleRunes {
		pairs = append(pairs, string(r), "")
	}
	return strings.NewReplacer(pairs...)
}()

// invisibleLeads are the first bytes of the invisible characters in UTF-8
// (TestInvisibleLeads keeps them in step with invisibleRunes).
const invisibleLeads = "\xc2\xe2\xef"

// CleanText removes invisible characters and surrounding space. Most texts
// hold none, and hold none of the bytes that begin one: they skip the
// replacer, which copies every text it is given.
func CleanText(s string) string {
	for i := 0; i < len(invisibleLeads); i++ {
		if strings.IndexByte(s, invisibleLeads[i]) >= 0 {
			s = invisible.Replace(s)
			break
		}
	}
	return strings.TrimSpace(s)
}

// Normalize cleans the text fields of a resource in place, so the same content
// always hashes the same however the source spaced it.
func (r *Resource) Normalize() {
	for _, p := range []*string{&r.ID, &r.NameSV, &r.NameEN, &r.NameDA, &r.NameDE, &r.DescriptionSV, &r.DescriptionEN,
		&r.DescriptionDA, &r.ApplicabilitySV, &r.ApplicabilityEN, &r.Synonyms, &r.SynonymsEN, &r.GWPUnit, &r.Unit,
		&r.ServiceLife, &r.Category, &r.CategoryEN, &r.CategoryCode, &r.BK04, &r.Version} {
		*p = CleanText(*p)
	}
	for i := range r.Transports {
		t := &r.Transports[i]
		t.Name, t.Type, t.Fuel, t.FuelResourceID = CleanText(t.Name), CleanText(t.Type), CleanText(t.Fuel), CleanText(t.FuelResourceID)
	}
	if len(r.Transports) == 0 {
		r.Transports = nil
	}
	if len(r.Conversions) == 0 {
		r.Conversions = nil
	}
}
