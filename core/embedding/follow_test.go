package embedding

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// gettable is fakeVectors that reads vectors by key (ports.VectorGetter),
// as both stores do.
type gettable struct{ *fakeVectors }

func (g gettable) GetVectors(_ context.Context, _ string, keys []core.Key) ([]ports.StoredVector, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []ports.StoredVector
	for _, k := range keys {
		if v, ok := g.rows[k]; ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// counting counts the texts an embedder is asked for.
type counting struct {
	fakeEmbedder
	texts atomic.Int32
}

func (c *counting) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int32(len(texts)))
	return c.fakeEmbedder.EmbedDocuments(ctx, texts)
}

// followFakes is newFakes with a vector store that reads by key and the
// store holding rs.
func followFakes(rs []core.Resource) (*Syncer, *counting, gettable, *fakeIndex, []core.Key) {
	e := &counting{}
	vs := gettable{&fakeVectors{rows: map[core.Key]ports.StoredVector{}}}
	ix := &fakeIndex{vecs: map[core.Key][]float32{}, fails: map[core.Key]bool{}}
	st := &fakeStore{}
	var keys []core.Key
	for _, r := range rs {
		st.stored = append(st.stored, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		keys = append(keys, r.Key())
	}
	return New(e, vs, ix, st, slog.New(slog.DiscardHandler)), e, vs, ix, keys
}

// writersVectors stores what another replica would for rs: the vectors of
// their current content.
func writersVectors(t *testing.T, vs gettable, rs []core.Resource) {
	var rows []ports.StoredVector
	for i := range rs {
		rows = append(rows, ports.StoredVector{Key: rs[i].Key(), Hash: core.ContentHash(&rs[i]), Vec: vecOf("writer " + rs[i].ID)})
	}
	if err := vs.PutVectors(context.Background(), "fake", rows); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateTakesStoredVectors: a resource whose vector of its current
// content is stored already is indexed from the store, not embedded
// again; one stored of older content is embedded.
func TestUpdateTakesStoredVectors(t *testing.T) {
	rs := resources(10, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	s, e, vs, ix, _ := followFakes(rs)
	writersVectors(t, vs, rs[:5])
	vs.rows[rs[5].Key()] = ports.StoredVector{Key: rs[5].Key(), Hash: "older content", Vec: vecOf("old")}
	n, err := s.Update(context.Background(), rs, nil)
	if err != nil || n != 10 {
		t.Fatalf("Update = %d, %v", n, err)
	}
	if e.texts.Load() != 5 {
		t.Fatalf("embedded %d texts, want 5 (the five without a current vector)", e.texts.Load())
	}
	for i, r := range rs {
		want := vecOf("writer " + r.ID)
		if i >= 5 {
			want = vecOf(core.EmbeddingText(&r))
		}
		if !equal(ix.vecs[r.Key()], want) {
			t.Errorf("%s: indexed vector is not the %s one", r.ID, map[bool]string{true: "stored", false: "embedded"}[i < 5])
		}
	}
}

// TestFollowWaitsForTheWritersVectors: a change another replica wrote is
// embedded by that replica; the follower waits for its vectors and takes
// them (no embedding), and embeds itself only when they do not come.
func TestFollowWaitsForTheWritersVectors(t *testing.T) {
	rs := resources(200, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	s, e, vs, ix, keys := followFakes(rs)
	go func() {
		time.Sleep(50 * time.Millisecond) // the writer's embedding
		writersVectors(t, vs, rs)
	}()
	n, err := s.Follow(context.Background(), keys, nil, 10*time.Second)
	if err != nil || n != 200 {
		t.Fatalf("Follow = %d, %v", n, err)
	}
	if e.texts.Load() != 0 || !equal(ix.vecs[rs[199].Key()], vecOf("writer "+rs[199].ID)) {
		t.Fatalf("the follower embedded %d texts, want 0", e.texts.Load())
	}

	// The writer stored only the first batch, then stopped: the rest is
	// embedded here.
	rs = resources(200, func(i int) string { return fmt.Sprintf("ny resurs %d", i) })
	s, e, vs, ix, keys = followFakes(rs)
	writersVectors(t, vs, rs[:batchSize])
	n, err = s.Follow(context.Background(), keys, nil, 100*time.Millisecond)
	if err != nil || n != 200 || len(ix.vecs) != 200 {
		t.Fatalf("Follow = %d, %v (%d indexed)", n, err, len(ix.vecs))
	}
	if got := e.texts.Load(); got != 200-batchSize {
		t.Fatalf("embedded %d texts, want %d", got, 200-batchSize)
	}
}
