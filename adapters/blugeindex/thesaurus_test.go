package blugeindex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// TestRingBackAtMaxRingFindsItsMembers: a synonym entry listed by more
// than maxRing resources is no ring and keeps only a count; once
// withdrawals bring it back to maxRing it is a ring again, of exactly the
// resources left, as in a lexicon built afresh from them.
func TestRingBackAtMaxRingFindsItsMembers(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)[:40]
	x := newIndex(t, rs)
	var listing []core.Resource
	for i := range 8 {
		r := rs[i].Clone()
		r.ID = fmt.Sprint(8200000000 + i)
		r.Synonyms = "Ringprovord"
		listing = append(listing, r)
	}
	if err := x.Upsert(ctx, listing); err != nil {
		t.Fatal(err)
	}
	ring := func() *ring {
		t.Helper()
		for id, r := range x.lex.thes.rings {
			if strings.Contains(x.lex.strOf[id], "ringprov") {
				return r
			}
		}
		t.Fatal("no ring for the entry")
		return nil
	}
	if r := ring(); r.n != 8 || r.keys != nil {
		t.Fatalf("8 resources list the entry: n %d, keys %v (want a count only)", r.n, r.keys)
	}
	var gone []core.Key
	for _, r := range listing[:5] {
		gone = append(gone, r.Key())
	}
	if err := x.Remove(ctx, gone); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, k := range ring().keys {
		got = append(got, k.String())
	}
	for _, r := range listing[5:] {
		want = append(want, r.Key().String())
	}
	slices.Sort(got)
	if r := ring(); r.n != maxRing || !slices.Equal(got, want) || len(x.lex.thes.lost) != 0 {
		t.Fatalf("back at %d: n %d, members %v, want %v (lost %v)", maxRing, r.n, got, want, x.lex.thes.lost)
	}
	sameLexicon(t, x.lex, newIndex(t, append(slices.Clone(rs), listing[5:]...)).lex)
}
