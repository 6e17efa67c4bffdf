package badgerstore

import (
	"context"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

func TestVectorsRoundTripPerEmbedder(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := ports.StoredVector{Key: core.Key{Catalog: core.National, ID: "6000000000"}, Hash: "h1", Vec: []float32{0.6, -0.8, 0}}
	b := ports.StoredVector{Key: core.Key{Catalog: core.DKBR, ID: "#G0164"}, Hash: "h2", Vec: []float32{1, 0, 0}}
	if err := st.PutVectors(ctx, "openai:BAAI/bge-m3:320", []ports.StoredVector{a, b}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutVectors(ctx, "hash-ngram-v1-320", []ports.StoredVector{a}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []ports.StoredVector
	err = st.ScanVectors(ctx, "openai:BAAI/bge-m3:320", func(v ports.StoredVector) error { got = append(got, v); return nil })
	if err != nil || len(got) != 2 {
		t.Fatalf("scan: %v %v", got, err)
	}
	for _, v := range got {
		want := a
		if v.Key.Catalog == core.DKBR {
			want = b
		}
		if v.Key != want.Key || v.Hash != want.Hash || len(v.Vec) != 3 || v.Vec[0] != want.Vec[0] || v.Vec[1] != want.Vec[1] {
			t.Fatalf("vector %+v, want %+v", v, want)
		}
	}
	n, err := st.DropVectorsExcept(ctx, "hash-ngram-v1-320")
	if err != nil || n != 2 {
		t.Fatalf("drop: %d %v", n, err)
	}
	count := 0
	_ = st.ScanVectors(ctx, "openai:BAAI/bge-m3:320", func(ports.StoredVector) error { count++; return nil })
	_ = st.ScanVectors(ctx, "hash-ngram-v1-320", func(ports.StoredVector) error { count += 10; return nil })
	if count != 10 {
		t.Fatalf("after drop: only the hash embedder's vector remains, count code %d", count)
	}
}
