package blugeindex

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// validUnpacked is validPacked as it was written before it read and
// checked in one pass: unpack every part, then check the layouts.
func validUnpacked(kept []byte, n int) bool {
	all, ok := appendWords(nil, kept)
	nw := len(all)
	if ok {
		all, ok = appendNames(all, kept)
	}
	nn := len(all)
	if ok {
		all, ok = appendEntries(all, kept)
	}
	ne := len(all)
	if ok {
		all, ok = appendHeads(all, kept)
	}
	if !ok || !validKept(all[:nw], all[nw:nn], n) {
		return false
	}
	_, _, thes, _ := keptParts(kept)
	return len(thes) == 0 || (ne > nn && validThes(all[nn:ne], all[ne:], n))
}

// validKept tells whether unpacked words and names have the layout of
// docAnalysis.words and names, with string ids under n: the layout check
// validPacked makes as it reads, written over unpacked values.
func validKept(words, names []uint32, n int) bool {
	ids := under(n) // string table ids
	return runs(words, len(languages), ids) &&
		runs(names, len(analysed), func(units []uint32) bool { return runs(units, n, ids) })
}

// under returns a check that every item is below n.
func under(n int) func([]uint32) bool {
	return func(xs []uint32) bool {
		for _, x := range xs {
			if int(x) >= n {
				return false
			}
		}
		return true
	}
}

// validThes tells whether unpacked entries and heads have the layouts of
// docAnalysis.entries and heads, with string ids under n.
func validThes(entries, heads []uint32, n int) bool {
	ids := under(n)
	return ids(entries) && runs(heads, len(analysed), ids)
}

// runs tells whether xs is a sequence of runs as unitAt reads them (a
// head under heads, a length, that many items), each run's items passing
// items. The words' and names' groups are such runs (their heads are
// languages), and so are the units of a name (their heads string ids).
func runs(xs []uint32, heads int, items func([]uint32) bool) bool {
	for i := 0; i < len(xs); {
		if i+2 > len(xs) || int(xs[i]) >= heads || int(xs[i+1]) > len(xs)-i-2 {
			return false
		}
		_, run, next := unitAt(xs, i)
		if !items(run) {
			return false
		}
		i = next
	}
	return true
}

// TestValidPackedAsUnpacked: checking a packing as it is read accepts
// exactly what unpacking it and checking the parts accepts, for every
// document of the real catalogs and for damaged copies of them (cut short,
// bytes changed, dropped or added, a smaller string table).
func TestValidPackedAsUnpacked(t *testing.T) {
	x := newIndex(t, loadCatalog(t))
	n := len(x.lex.strOf)
	rng := rand.New(rand.NewPCG(1, 2))
	docs, refused := 0, 0
	for k, d := range x.lex.docs {
		docs++
		check := func(what string, kept []byte, n int) {
			t.Helper()
			got, want := validPacked(kept, n), validUnpacked(kept, n)
			if got != want {
				t.Fatalf("%s, %s: validPacked %v, unpacked %v for %v (n %d)", k, what, got, want, kept, n)
			}
			if !got {
				refused++
			}
		}
		check("as kept", d.kept, n)
		check("a table of one string", d.kept, 1)
		for cut := range len(d.kept) {
			check("cut short", d.kept[:cut], n)
		}
		for range 40 {
			b := slices.Clone(d.kept)
			switch i := rng.IntN(len(b)); rng.IntN(4) {
			case 0:
				b[i] = byte(rng.IntN(256))
			case 1:
				b[i] ^= 0x80 // a varint that goes on, or stops
			case 2:
				b = slices.Delete(b, i, i+1)
			default:
				b = slices.Insert(b, i, byte(rng.IntN(256)))
			}
			check("damaged", b, n)
		}
	}
	if docs == 0 || refused == 0 {
		t.Fatalf("%d documents, %d refused packings: the damage was not seen", docs, refused)
	}
}
