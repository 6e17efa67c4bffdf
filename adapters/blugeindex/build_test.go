package blugeindex

import (
	"context"
	"slices"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// buildChange is a change of the real catalog touching all three kinds of
// document: one renamed, one new, one removed. It returns the change's
// resources, the removed key and the catalog the change leaves.
func buildChange(rs []core.Resource) (upsert []core.Resource, removed core.Key, after []core.Resource) {
	renamed := rs[10].Clone()
	renamed.NameSV, renamed.NameEN, renamed.Synonyms, renamed.SynonymsEN = "Kvastskaft", "Broomstick", "", ""
	added := rs[11].Clone()
	added.ID, added.NameSV, added.NameEN = "7999999999", "Sopskyffel", "Dustpan"
	removed = rs[12].Key()
	for i, r := range rs {
		switch i {
		case 10:
			after = append(after, renamed)
		case 12:
		default:
			after = append(after, r)
		}
	}
	return []core.Resource{renamed, added}, removed, append(after, added)
}

// built prepares and builds the change of upsert and removed.
func built(t *testing.T, x *Index, upsert []core.Resource, removed core.Key) ports.IndexChange {
	t.Helper()
	ch, err := x.Prepare(context.Background(), upsert, []core.Key{removed})
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Build(); err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestBuiltChangeIsSeenOnlyAfterCommit: a built change's segments are in
// bluge's writer, yet searches keep answering from the last commit until
// the change commits; then they answer as an index of the new catalog.
func TestBuiltChangeIsSeenOnlyAfterCommit(t *testing.T) {
	golden := loadGolden(t)
	rs := loadCatalog(t)
	x := newIndex(t, rs)
	before := answers(t, x, golden)
	upsert, removed, after := buildChange(rs)

	ch := built(t, x, upsert, removed)
	if got := answers(t, x, golden); !slices.Equal(got, before) {
		t.Errorf("searches see a built change before its commit:\n got %q\nwant %q", got, before)
	}
	for _, q := range []string{"kvastskaft", "sopskyffel"} {
		if hits := search(t, x, core.TextQuery{Text: q}); len(hits) != 0 {
			t.Errorf("%q finds %v before the commit", q, ids(hits))
		}
	}
	if err := ch.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := answers(t, x, golden), answers(t, newIndex(t, after), golden); !slices.Equal(got, want) {
		t.Errorf("after the commit the answers are not those of the new catalog:\n got %q\nwant %q", got, want)
	}
	wantFirst(t, x, core.TextQuery{Text: "kvastskaft"}, upsert[0].ID)
	wantFirst(t, x, core.TextQuery{Text: "sopskyffel"}, upsert[1].ID)
}

// TestDiscardedBuildLeavesNoTrace: a change built and then discarded (its
// store write failed) leaves nothing in the index. The next change's commit
// publishes bluge's whole writer; its answers must be those of the catalog
// without the discarded change, and the index so left persists and resumes.
func TestDiscardedBuildLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	golden := loadGolden(t)
	rs := loadCatalog(t)
	dir := t.TempDir()
	x := openIndex(t, dir)
	if _, err := x.Resume(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	upsert, removed, _ := buildChange(rs)
	ch := built(t, x, upsert, removed)
	ch.Discard()
	ch.Discard() // twice is harmless
	if err := ch.Commit(); err == nil {
		t.Error("a discarded change committed")
	}

	// Another change commits, taking a reader of everything bluge holds.
	other := rs[20].Clone()
	other.NameEN = other.NameEN + " Extra"
	if err := x.Upsert(ctx, []core.Resource{other}); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(rs)
	want[20] = other
	wantAnswers := answers(t, newIndex(t, want), golden)
	if got := answers(t, x, golden); !slices.Equal(got, wantAnswers) {
		t.Errorf("a discarded change shows after the next commit:\n got %q\nwant %q", got, wantAnswers)
	}
	for _, q := range []string{"kvastskaft", "sopskyffel"} {
		if hits := search(t, x, core.TextQuery{Text: q}); len(hits) != 0 {
			t.Errorf("%q finds %v from the discarded change", q, ids(hits))
		}
	}
	if !containsID(search(t, x, core.TextQuery{Text: removed.ID, Limit: 5}), removed.ID) {
		t.Errorf("%s, removed by the discarded change, is no longer found by its id", removed)
	}

	// Not marked failed: it persists, and resumes with the same answers.
	mark, err := x.Persist(ctx)
	if err != nil || mark == "" {
		t.Fatalf("Persist after a discarded build: mark %q, %v", mark, err)
	}
	y := openIndex(t, dir)
	if ok, err := y.Resume(ctx, mark); !ok || err != nil {
		t.Fatalf("Resume: %v %v", ok, err)
	}
	if got := answers(t, y, golden); !slices.Equal(got, wantAnswers) {
		t.Errorf("resumed after a discarded build:\n got %q\nwant %q", got, wantAnswers)
	}
}
