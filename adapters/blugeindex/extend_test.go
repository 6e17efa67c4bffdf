package blugeindex

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// extendedParts cuts a change of the real catalog into three parts over an
// index of its first half: the second half in two parts, with renames that
// bring new compound words (new dictionaries, documents of earlier parts
// split again), a key of the first part renamed again in the last, and
// removals of indexed resources. It returns the parts' upserts and
// removals and the catalog the whole change leaves.
func extendedParts(rs []core.Resource) (base []core.Resource, upserts [3][]core.Resource, removes [3][]core.Key, after []core.Resource) {
	n := len(rs)
	base = rs[:n/2]
	upserts[0] = slices.Clone(rs[n/2 : 3*n/4])
	upserts[1] = slices.Clone(rs[3*n/4:])
	for i := 0; i < n/2; i += 7 { // indexed ones, renamed
		r := rs[i].Clone()
		r.NameSV = "Skumglasblock " + r.NameSV
		r.Synonyms = "Lättviktsskumglas"
		upserts[2] = append(upserts[2], r)
	}
	again := upserts[0][3].Clone() // of the first part
	again.NameSV, again.NameEN = "Kvastskaftshållare", "Broomstick holder"
	upserts[2] = append(upserts[2], again)
	for i := 3; i < n/2; i += 11 {
		if i%7 != 0 {
			removes[1] = append(removes[1], rs[i].Key())
		}
	}
	final := map[core.Key]core.Resource{}
	for _, r := range base {
		final[r.Key()] = r
	}
	for p := range upserts {
		for _, r := range upserts[p] {
			final[r.Key()] = r
		}
		for _, k := range removes[p] {
			delete(final, k)
		}
	}
	for _, r := range rs {
		if f, ok := final[r.Key()]; ok {
			after = append(after, f)
		}
	}
	return base, upserts, removes, after
}

// extended prepares the first part and extends the change by the others,
// checking after each that searches still answer as before.
func extended(t *testing.T, x *Index, upserts [3][]core.Resource, removes [3][]core.Key, golden []goldenQuery, before []string) ports.IndexChange {
	t.Helper()
	ctx := context.Background()
	ch, err := x.Prepare(ctx, upserts[0], removes[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Discard) // before the index closes: a change holds its writes
	for p := 1; p < len(upserts); p++ {
		if err := ch.Extend(ctx, upserts[p], removes[p]); err != nil {
			t.Fatal(err)
		}
		if got := answers(t, x, golden); !slices.Equal(got, before) {
			t.Fatalf("searches see part of a change after %d of its parts", p+1)
		}
		if hits := search(t, x, core.TextQuery{Text: "kvastskaftshållare"}); len(hits) != 0 {
			t.Fatalf("a word of the last part is found before the commit: %v", ids(hits))
		}
	}
	return ch
}

// TestExtendedChangeIsSeenWholeAtCommit: a change taken in three parts
// (Prepare, then Extend twice) is invisible to searches until its commit,
// though each part is analysed against the lexicon the parts before it
// leave (new dictionaries, a key of one part changed again in a later one,
// documents of an earlier part split again); once committed, the index
// answers and holds the lexicon of a fresh index of the resulting catalog,
// and goes on taking changes as one.
func TestExtendedChangeIsSeenWholeAtCommit(t *testing.T) {
	golden := loadGolden(t)
	base, upserts, removes, after := extendedParts(loadCatalog(t))
	x := newIndex(t, base)
	before := answers(t, x, golden)
	ch := extended(t, x, upserts, removes, golden, before)
	if err := ch.Commit(); err != nil {
		t.Fatal(err)
	}
	fresh := newIndex(t, after)
	if got, want := answers(t, x, golden), answers(t, fresh, golden); !slices.Equal(got, want) {
		t.Errorf("after the commit the answers are not those of the new catalog: %s", firstDiff(got, want))
	}
	sameLexicon(t, x.lex, fresh.lex)
	wantFirst(t, x, core.TextQuery{Text: "kvastskaftshållare"}, upserts[2][len(upserts[2])-1].ID)

	// The next change, on the lexicon the extended one left.
	after, next := renamedOne(t, x, after)
	fresh = newIndex(t, after)
	if got, want := answers(t, x, golden), answers(t, fresh, golden); !slices.Equal(got, want) {
		t.Errorf("after a change following the extended one the answers are not those of the catalog")
	}
	sameLexicon(t, x.lex, fresh.lex)
	wantFirst(t, x, core.TextQuery{Text: "sopskyffel"}, next.ID)
}

// TestDiscardedExtendedChangeLeavesNoTrace: an extended change discarded
// (its store write failed), and one whose last part is refused, leave the
// index as it was: the next change publishes bluge's whole writer, and
// its answers and lexicon are those of the catalog without the discarded
// change.
func TestDiscardedExtendedChangeLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	golden := loadGolden(t)
	base, upserts, removes, _ := extendedParts(loadCatalog(t))
	x := newIndex(t, base)
	before := answers(t, x, golden)

	extended(t, x, upserts, removes, golden, before).Discard()

	ch, err := x.Prepare(ctx, upserts[0], removes[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Discard)
	if err := ch.Extend(ctx, upserts[1], removes[1]); err != nil {
		t.Fatal(err)
	}
	if err := ch.Extend(ctx, []core.Resource{{NameSV: "Utan id"}}, nil); err == nil {
		t.Fatal("a part with a resource without id was taken")
	}
	ch.Discard()

	want, _ := renamedOne(t, x, base)
	fresh := newIndex(t, want)
	if got, want := answers(t, x, golden), answers(t, fresh, golden); !slices.Equal(got, want) {
		t.Errorf("discarded parts show in the next change's answers: %s", firstDiff(got, want))
	}
	sameLexicon(t, x.lex, fresh.lex)
	if hits := search(t, x, core.TextQuery{Text: "kvastskaftshållare"}); len(hits) != 0 {
		t.Errorf("a discarded part is found: %v", ids(hits))
	}
}

// renamedOne renames the sixth resource of rs "Sopskyffel" in x, a change
// of one resource after an extended one, and returns the catalog it leaves
// and the renamed resource.
func renamedOne(t *testing.T, x *Index, rs []core.Resource) ([]core.Resource, core.Resource) {
	t.Helper()
	next := rs[5].Clone()
	next.NameSV = "Sopskyffel"
	if err := x.Upsert(context.Background(), []core.Resource{next}); err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(rs)
	out[5] = next
	return out, next
}

// firstDiff describes where two lists of answers part.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(got), len(want))
}
