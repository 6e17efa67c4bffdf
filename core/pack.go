package core

import "strings"

// Pack makes the strings ps point to slices of one new string holding all
// their bytes. Each is then its own copy, not a slice of a larger text that
// it would keep alive (a file's whole row), and the ids of a large change
// are one heap object instead of one each: a million-row file's ids, held
// through its apply by the diff, the answer and the index, were millions
// of small objects the collector found again at every cycle. A packed
// string keeps its whole pack alive: pack what lives and goes together.
func Pack(ps []*string) {
	n := 0
	for _, p := range ps {
		n += len(*p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range ps {
		b.WriteString(*p)
	}
	all := b.String()
	for _, p := range ps {
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
