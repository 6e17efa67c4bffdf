package core

import "strings"

// Pack makes the string field(&xs[i]) of each of xs point to a slice of
// one new string holding all their bytes. Each is then its own copy, not a
// slice of a larger text that it would keep alive (a file's whole row),
// and the ids of a large change are one heap object instead of one each: a
// million-row file's ids, held through its apply by the diff, the answer
// and the index, were millions of small objects the collector found again
// at every cycle. A packed string keeps its whole pack alive: pack what
// lives and goes together.
func Pack[T any](xs []T, field func(*T) *string) {
	n := 0
	for i := range xs {
		n += len(*field(&xs[i]))
	}
	var b strings.Builder
	b.Grow(n)
	for i := range xs {
		b.WriteString(*field(&xs[i]))
	}
	all := b.String()
	for i := range xs {
		p := field(&xs[i])
		*p, all = all[:len(*p)], all[len(*p):]
	}
}

// Refs returns the refs (catalog:id, as Key.String) of ids of one catalog,
// packed as Pack packs.
func Refs(cat CatalogID, ids []string) []string {
	n := 0
	for _, id := range ids {
		n += len(cat) + 1 + len(id)
	}
	var b strings.Builder
	b.Grow(n)
	for _, id := range ids {
		b.WriteString(string(cat))
		b.WriteByte(':')
		b.WriteString(id)
	}
	all := b.String()
	out := make([]string, len(ids))
	for i, id := range ids {
		l := len(cat) + 1 + len(id)
		out[i], all = all[:l], all[l:]
	}
	return out
}
