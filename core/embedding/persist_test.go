package embedding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// keptIndex is a fakeIndex that can be kept: Persist copies its vectors
// under the embedder and mark into kept, Resume takes them up from there
// when both match.
type keptIndex struct {
	*fakeIndex
	kept     *keptState
	persists int
	resumes  int
}

type keptState struct {
	embedder, mark string
	vecs           map[core.Key][]float32
}

var _ ports.VectorSnapshots = (*keptIndex)(nil)

func (k *keptIndex) Persist(_ context.Context, embedderID, mark string) error {
	k.persists++
	k.mu.Lock()
	defer k.mu.Unlock()
	*k.kept = keptState{embedder: embedderID, mark: mark, vecs: maps.Clone(k.vecs)}
	return nil
}

func (k *keptIndex) Resume(_ context.Context, embedderID, mark string) (bool, error) {
	k.resumes++
	if mark == "" || k.kept.vecs == nil || mark != k.kept.mark || embedderID != k.kept.embedder {
		return false, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.vecs = maps.Clone(k.kept.vecs)
	return true, nil
}

type otherEmbedder struct{ fakeEmbedder }

func (*otherEmbedder) ID() string { return "other" }

// keptFakes is newFakes over a keptIndex sharing kept, with the store's
// resources and stored vectors of a first start.
func keptFakes(e ports.Embedder, kept *keptState, stored []ports.StoredResource, rows map[core.Key]ports.StoredVector, mark string) (*Syncer, *keptIndex, *fakeVectors, *fakeStore) {
	vs := &fakeVectors{rows: rows}
	ix := &keptIndex{fakeIndex: &fakeIndex{vecs: map[core.Key][]float32{}, fails: map[core.Key]bool{}}, kept: kept}
	st := &fakeStore{stored: stored, mark: mark}
	return New(e, vs, ix, st, slog.New(slog.DiscardHandler)), ix, vs, st
}

func storedOf(rs []core.Resource) []ports.StoredResource {
	out := make([]ports.StoredResource, len(rs))
	for i := range rs {
		out[i] = ports.StoredResource{Resource: rs[i], Hash: core.ContentHash(&rs[i])}
	}
	return out
}

// TestBootTakesUpTheKeptIndex: a start whose store holds the mark the
// vectors were kept under, by the same embedder, takes the index up and
// neither embeds, reads the store, nor inserts; another mark or another
// embedder rebuilds as before.
func TestBootTakesUpTheKeptIndex(t *testing.T) {
	ctx := context.Background()
	rs := resources(300, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	stored := storedOf(rs)
	kept := &keptState{}
	e := &fakeEmbedder{}

	// First start: everything embedded; a clean stop keeps it under m1.
	s, ix, vs, _ := keptFakes(e, kept, stored, map[core.Key]ports.StoredVector{}, "")
	if _, computed, err := s.Boot(ctx); err != nil || computed != len(rs) {
		t.Fatalf("first Boot: %d computed, %v", computed, err)
	}
	want := maps.Clone(ix.vecs)
	if err := s.Persist(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if ix.persists != 1 || kept.mark != "m1" || kept.embedder != "fake" {
		t.Fatalf("kept %d times, under %q by %q", ix.persists, kept.mark, kept.embedder)
	}
	if _, err := s.Update(ctx, rs[:1], nil); !errors.Is(err, ErrStopped) {
		t.Fatalf("an update after Persist: %v", err)
	}

	// Second start, the store holds m1: taken up, nothing else.
	e2 := &fakeEmbedder{}
	s2, ix2, _, st2 := keptFakes(e2, kept, stored, vs.rows, "m1")
	loaded, computed, err := s2.Boot(ctx)
	if err != nil || loaded != len(rs) || computed != 0 {
		t.Fatalf("Boot = %d loaded, %d computed, %v", loaded, computed, err)
	}
	if e2.calls.Load() != 0 || ix2.many != 0 || ix2.one != 0 || st2.scans.Load() != 0 {
		t.Fatalf("taking up embedded %d batches, inserted %d+%d times, scanned %d catalogs", e2.calls.Load(), ix2.many, ix2.one, st2.scans.Load())
	}
	if !maps.EqualFunc(ix2.vecs, want, equal) {
		t.Fatal("the index taken up is not the one kept")
	}
	// And it is kept again at the next stop.
	if err := s2.Persist(ctx, "m2"); err != nil || kept.mark != "m2" {
		t.Fatalf("kept again: %v, under %q", err, kept.mark)
	}

	for _, tc := range []struct {
		name string
		e    interface {
			ports.Embedder
		}
		mark string
	}{
		{"another mark (a write since, a crash)", &fakeEmbedder{}, "m1"},
		{"no mark", &fakeEmbedder{}, ""},
		{"another embedder", &otherEmbedder{}, "m2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Stored vectors of a third of the resources only: the rest is
			// embedded, so a rebuild shows.
			rows := map[core.Key]ports.StoredVector{}
			for i, r := range rs {
				if i%3 == 0 {
					rows[r.Key()] = vs.rows[r.Key()]
				}
			}
			s3, ix3, _, st3 := keptFakes(tc.e, kept, stored, rows, tc.mark)
			loaded, computed, err := s3.Boot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ix3.resumes != 1 || st3.scans.Load() == 0 || computed == 0 || loaded+computed != len(rs) {
				t.Fatalf("not rebuilt: %d resumes, %d scans, %d loaded, %d computed", ix3.resumes, st3.scans.Load(), loaded, computed)
			}
		})
	}
}

// TestPersistOnlyWhenInStep: the index is not kept when it may be short
// of the store: before Boot has finished, after a failed update, with
// vectors still queued.
func TestPersistOnlyWhenInStep(t *testing.T) {
	ctx := context.Background()
	rs := resources(20, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	for _, tc := range []struct {
		name string
		do   func(s *Syncer)
	}{
		{"before Boot", nil},
		{"after a failed update", func(s *Syncer) {
			mustBoot(t, s)
			bad := rs[:2]
			bad[1].NameSV = "fail"
			if _, err := s.Update(ctx, bad, nil); err == nil {
				t.Fatal("the embedder did not fail")
			}
		}},
		{"after a cancelled update", func(s *Syncer) {
			mustBoot(t, s)
			c, cancel := context.WithCancel(ctx)
			cancel()
			_, _ = s.UpdateKeys(c, []core.Key{rs[0].Key()}, nil)
		}},
		{"with vectors queued", func(s *Syncer) {
			mustBoot(t, s)
			s.AddBacklog(3)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := resources(20, func(i int) string { return fmt.Sprintf("resurs %d", i) })
			s, ix, _, _ := keptFakes(&fakeEmbedder{}, &keptState{}, storedOf(rs), map[core.Key]ports.StoredVector{}, "")
			if tc.do != nil {
				tc.do(s)
			}
			if err := s.Persist(ctx, "m"); err == nil || ix.persists != 0 {
				t.Fatalf("kept (%d) when short of the store: %v", ix.persists, err)
			}
		})
	}
}

func mustBoot(t *testing.T, s *Syncer) {
	t.Helper()
	if _, _, err := s.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
}
