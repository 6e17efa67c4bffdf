package badgerstore

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

func TestStashSurvivesRestartAndExpires(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), (5<<20)/16+3) // 5 MiB + 48 bytes: six chunks
	if err := st.Stash(ctx, "pv_big", core.StashedFile{Filename: "tabel7.xlsx", Data: big}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.Stash(ctx, "pv_short", core.StashedFile{Filename: "a.csv", Data: []byte("id\n1\n")}, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, found, err := st.Stashed(ctx, "pv_big")
	if err != nil || !found || f.Filename != "tabel7.xlsx" || !bytes.Equal(f.Data, big) {
		t.Fatalf("after restart: found %v, %d bytes, %v", found, len(f.Data), err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, found, err := st.Stashed(ctx, "pv_short")
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a stashed file outlived its TTL")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, found, _ := st.Stashed(ctx, "pv_none"); found {
		t.Fatal("unknown id found")
	}
}
