package blugeindex

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/climatesearch/climatesearch/core"
)

// TestIndexedTextsAreNotKept: once a resource is indexed, nothing the index
// keeps refers to the text it was given. A file's fields are slices of one
// string per row (encoding/csv), so a word or id kept as a slice of its
// field would keep the whole row alive, and Go's map assignment stores the
// key it is given even when an equal key is there: counting a word again
// would keep the newer row instead. Rows of a few kilobytes make a kept one
// cost the index megabytes per thousand resources.
func TestIndexedTextsAreNotKept(t *testing.T) {
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	const n = 64
	pad := strings.Repeat("x", 4096)
	rows := func(gen int) ([]core.Resource, []weak.Pointer[byte]) {
		rs := make([]core.Resource, n)
		ws := make([]weak.Pointer[byte], n)
		for i := range rs {
			// One string per row, as encoding/csv gives them; every field a
			// slice of it. Every row has a number of its own, and the
			// other words are shared by all rows.
			row := fmt.Sprintf("#T%06d;Produkt %d beton klasse %d;Product %d concrete;%s", i, 1000*gen+i, i%4, 1000*gen+i, pad)
			f := strings.Split(row, ";")
			rs[i] = core.Resource{Catalog: core.DKBR, ID: f[0], NameDA: f[1], NameEN: f[2], DescriptionDA: f[3][:1]}
			ws[i] = weak.Make(unsafe.StringData(row))
		}
		return rs, ws
	}
	ctx := context.Background()
	rs, first := rows(1)
	if err := x.Upsert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	rs, second := rows(2) // the same ids and shared words, new numbers
	if err := x.Upsert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	rs = nil
	runtime.GC()
	runtime.GC()
	kept := 0
	for _, w := range append(first, second...) {
		if w.Value() != nil {
			kept++
		}
	}
	if kept > 0 {
		t.Fatalf("%d of %d rows are still alive after they were indexed", kept, 2*n)
	}
	if got := search(t, x, core.TextQuery{Text: "concrete 2005", Lang: core.English}); len(got) == 0 || got[0].Key.ID != "#T000005" {
		t.Fatalf("search after the update: %v", ids(got))
	}
}
