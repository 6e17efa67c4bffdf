package hnsw

// pageSlots is the number of slots of a whole page of a paged array: 8,192
// vectors of 320 codes are 2.5 MiB, their layer-0 lists (M 16) 1 MiB.
const (
	pageShift = 13
	pageSlots = 1 << pageShift
	pageMask  = pageSlots - 1
)

// paged is an array of slots of width elements each, kept in pages of
// pageSlots slots. Growing it adds pages and copies none of them (only the
// last page, while it is smaller than a whole one, grows as a slice does):
// the vectors and layer-0 lists are nine tenths of a graph's memory, and
// growing them as single arrays held the old and the new copy at once, a
// transient of more than twice the graph (about a gigabyte at a million
// vectors) that set the process's peak memory once the vectors of a bulk
// load caught up. Pages are replaced only under the index's write lock.
type paged[T any] struct {
	width int // elements per slot
	pages [][]T
}

// at returns slot s's elements.
func (p *paged[T]) at(s uint32) []T {
	pg := p.pages[s>>pageShift]
	i := int(s&pageMask) * p.width
	return pg[i : i+p.width : i+p.width]
}

// slots returns how many slots the pages hold.
func (p *paged[T]) slots() int {
	n := len(p.pages)
	if n == 0 {
		return 0
	}
	return (n-1)*pageSlots + len(p.pages[n-1])/p.width
}

// grow makes room for at least n slots; a slot added is zero.
func (p *paged[T]) grow(n int) {
	for p.slots() < n {
		last := len(p.pages) - 1
		if last < 0 || len(p.pages[last]) == pageSlots*p.width {
			p.pages = append(p.pages, nil)
			last++
		}
		have := len(p.pages[last]) / p.width
		want := min(pageSlots, max(n-last*pageSlots, have+have/4, 64))
		p.pages[last] = append(make([]T, 0, want*p.width), p.pages[last]...)[:want*p.width]
	}
}

// chunks calls fn with the elements of slots [0, n) in order, a page at a
// time (n at most slots()).
func (p *paged[T]) chunks(n int, fn func([]T)) {
	for i := 0; n > 0; i++ {
		k := min(n, pageSlots)
		fn(p.pages[i][:k*p.width])
		n -= k
	}
}
