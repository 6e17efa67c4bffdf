package hnsw

import (
	"testing"
	"unsafe"
)

// Growing a paged array keeps every whole page where it is (nothing is
// copied, so the old and the new array are never held together), keeps
// every slot's elements, and adds zero slots.
func TestPagedGrowsWithoutCopyingWholePages(t *testing.T) {
	p := paged[uint32]{width: 3}
	fill := func(from, to int) {
		for s := from; s < to; s++ {
			for i, w := range p.at(uint32(s)) {
				if w != 0 {
					t.Fatalf("slot %d word %d of a grown array is %d, want 0", s, i, w)
				}
				p.at(uint32(s))[i] = uint32(s*3 + i)
			}
		}
	}
	p.grow(10)
	if p.slots() < 10 {
		t.Fatalf("grow(10): %d slots", p.slots())
	}
	fill(0, 10)
	p.grow(pageSlots + 5)
	first := unsafe.SliceData(p.pages[0])
	fill(10, pageSlots+5)
	p.grow(5*pageSlots + 1)
	if unsafe.SliceData(p.pages[0]) != first {
		t.Error("a whole page moved when the array grew")
	}
	if p.slots() < 5*pageSlots+1 || len(p.pages) != 6 {
		t.Errorf("grow(5 pages + 1): %d slots in %d pages", p.slots(), len(p.pages))
	}
	fill(pageSlots+5, 5*pageSlots+1)
	for s := 0; s < 5*pageSlots+1; s++ {
		if got := p.at(uint32(s)); got[0] != uint32(s*3) || got[2] != uint32(s*3+2) || len(got) != 3 || cap(got) != 3 {
			t.Fatalf("slot %d holds %v (cap %d)", s, got, cap(got))
		}
	}
	var n, words int
	p.chunks(2*pageSlots+7, func(c []uint32) {
		if c[0] != uint32(n*3) {
			t.Errorf("chunk from slot %d starts with %d", n, c[0])
		}
		n += len(c) / 3
		words += len(c)
	})
	if n != 2*pageSlots+7 || words != 3*n {
		t.Errorf("chunks covered %d slots, %d words", n, words)
	}
}
