package blugeindex

import "encoding/binary"

// An indexed document keeps its words, name units and part of the
// thesaurus (docAnalysis.kept) packed as unsigned varints in one slice: at
// a million documents they were the largest part of the lexicon (about 90
// uint32 a document in two slices, 360 bytes and two slice headers), while
// the values are string table ids that fit in one or two bytes and small
// counts. Sorted ids are kept as differences: the words of a language
// (they only answer whether a document holds one of some words, holdsAny,
// so their order is free) and the synonym entries (a set).
//
// The packed layout: the length in bytes of the words part, the words part
// (per language group: its index in languages, the number of words, the
// differences of the sorted string ids), the length in bytes of the names
// part, the names part (the name groups as flatNames lays them out behind
// their language's index in analysed and their length, each value as it
// is), then the thesaurus part, empty for the many documents without
// synonyms: the number of synonym entries, the differences of their
// sorted string ids (of entryKey), then the heads of the names, groups of
// one language as the names (its index in analysed, the count, string
// ids). Unpacked, the parts have the layouts words, names, entries and
// heads return.

// packKept packs unpacked words (each group sorted), names, entries
// (sorted) and heads into a slice of its own. scratch is reused for the
// parts.
func packKept(words, names, entries, heads []uint32, scratch []byte) (kept, _ []byte) {
	b := scratch[:0]
	for i := 0; i < len(words); {
		li, ids, next := unitAt(words, i)
		b = binary.AppendUvarint(b, uint64(li))
		b = appendSorted(b, ids)
		i = next
	}
	nw := len(b)
	b = appendValues(b, names)
	nn := len(b) - nw
	if len(entries) > 0 {
		b = appendSorted(b, entries)
		b = appendValues(b, heads)
	}
	kept = make([]byte, 0, uvarintLen(uint32(nw))+uvarintLen(uint32(nn))+len(b))
	kept = binary.AppendUvarint(kept, uint64(nw))
	kept = append(kept, b[:nw]...)
	kept = binary.AppendUvarint(kept, uint64(nn))
	kept = append(kept, b[nw:]...)
	return kept, b
}

// appendSorted appends the number of ids and the differences of the
// sorted ids.
func appendSorted(b []byte, ids []uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	prev := uint32(0)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	return b
}

// appendValues appends each value as it is.
func appendValues(b []byte, vs []uint32) []byte {
	for _, v := range vs {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b
}

// uvarintLen is the number of bytes of v as an unsigned varint.
func uvarintLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendWords appends the unpacked words of packed kept to dst: per
// language its index in languages, the number of words, their string ids
// in increasing order. ok is false when kept is not a packing (a snapshot
// written wrong).
func appendWords(dst []uint32, kept []byte) (_ []uint32, ok bool) {
	w, _, _, ok := keptParts(kept)
	for ok && len(w) > 0 {
		var li uint32
		if w, ok = nextUvarint(w, &li); ok {
			dst = append(dst, li, 0)
			at := len(dst)
			dst, w, ok = unpackSorted(dst, w)
			dst[at-1] = uint32(len(dst) - at)
		}
	}
	return dst, ok
}

// appendNames appends the unpacked name units of packed kept to dst (see
// docAnalysis.names).
func appendNames(dst []uint32, kept []byte) (_ []uint32, ok bool) {
	_, names, _, ok := keptParts(kept)
	if !ok {
		return dst, false
	}
	return unpackValues(dst, names)
}

// appendEntries appends the synonym entries of packed kept to dst, in
// increasing order.
func appendEntries(dst []uint32, kept []byte) (_ []uint32, ok bool) {
	_, _, thes, ok := keptParts(kept)
	if !ok || len(thes) == 0 {
		return dst, ok
	}
	dst, _, ok = unpackSorted(dst, thes)
	return dst, ok
}

// appendHeads appends the name heads of packed kept to dst.
func appendHeads(dst []uint32, kept []byte) (_ []uint32, ok bool) {
	_, _, thes, ok := keptParts(kept)
	if !ok || len(thes) == 0 {
		return dst, ok
	}
	var n uint32
	if thes, ok = nextUvarint(thes, &n); !ok {
		return dst, false
	}
	var skipped uint32
	for range n { // the entries
		if thes, ok = nextUvarint(thes, &skipped); !ok {
			return dst, false
		}
	}
	return unpackValues(dst, thes)
}

// keptParts splits packed kept into its words, names and thesaurus parts.
func keptParts(kept []byte) (words, names, thes []byte, ok bool) {
	words, rest, ok := lengthPrefixed(kept)
	if !ok {
		return nil, nil, nil, false
	}
	names, thes, ok = lengthPrefixed(rest)
	return words, names, thes, ok
}

// lengthPrefixed splits b after the run of bytes its first varint gives
// the length of.
func lengthPrefixed(b []byte) (run, rest []byte, ok bool) {
	var n uint32
	b, ok = nextUvarint(b, &n)
	if !ok || int(n) > len(b) {
		return nil, nil, false
	}
	return b[:n], b[n:], true
}

// unpackSorted appends the ids appendSorted packed at the start of b and
// returns the rest of b.
func unpackSorted(dst []uint32, b []byte) (_ []uint32, rest []byte, ok bool) {
	var n uint32
	if b, ok = nextUvarint(b, &n); !ok || int(n) > len(b) { // a byte or more each
		return dst, b, false
	}
	id := uint32(0)
	for range n {
		var d uint32
		if b, ok = nextUvarint(b, &d); !ok {
			return dst, b, false
		}
		id += d
		dst = append(dst, id)
	}
	return dst, b, true
}

// unpackValues appends every value of b.
func unpackValues(dst []uint32, b []byte) (_ []uint32, ok bool) {
	for len(b) > 0 {
		if b[0] < 0x80 { // most values are one byte: read them inline
			dst = append(dst, uint32(b[0]))
			b = b[1:]
			continue
		}
		var v uint32
		if b, ok = nextUvarint(b, &v); !ok {
			return dst, false
		}
		dst = append(dst, v)
	}
	return dst, true
}

// nextUvarint reads one unsigned varint of at most 32 bits from b into v.
// Most values are one byte, read here inline; longer ones by
// longUvarint.
func nextUvarint(b []byte, v *uint32) ([]byte, bool) {
	if len(b) > 0 && b[0] < 0x80 {
		*v = uint32(b[0])
		return b[1:], true
	}
	return longUvarint(b, v)
}

// longUvarint is nextUvarint for a value of any length.
func longUvarint(b []byte, v *uint32) ([]byte, bool) {
	x, n := binary.Uvarint(b)
	if n <= 0 || x > 1<<32-1 {
		return b, false
	}
	*v = uint32(x)
	return b[n:], true
}

// validPacked tells whether kept is a packing as packKept writes it, with
// every string id under n: a snapshot that passed its checksum but was
// written wrong must not make a search index out of range (string ids
// index the table, lengths cut slices). It reads the values as it checks
// them: unpacking each document into a scratch slice first was a third of
// the CPU of reading a snapshot of a million documents.
func validPacked(kept []byte, n int) bool {
	words, names, thes, ok := keptParts(kept)
	for ok && len(words) > 0 { // per language: its index, then sorted ids
		var li uint32
		if words, ok = nextUvarint(words, &li); ok && int(li) < len(languages) {
			words, _, ok = sortedUnder(words, n)
		} else {
			ok = false
		}
	}
	if !ok || !validRuns(&packedValues{b: names}, len(analysed), n, true) {
		return false
	}
	if len(thes) == 0 {
		return true
	}
	thes, entries, ok := sortedUnder(thes, n)
	return ok && entries > 0 && validRuns(&packedValues{b: thes}, len(analysed), n, false)
}

// sortedUnder reads the ids appendSorted packed at the start of b, checks
// that each is under n, and returns the rest of b and their number.
func sortedUnder(b []byte, n int) (rest []byte, count uint32, ok bool) {
	if b, ok = nextUvarint(b, &count); !ok || int(count) > len(b) { // a byte or more each
		return b, 0, false
	}
	id := uint32(0)
	for range count {
		var d uint32
		if b, ok = nextUvarint(b, &d); !ok {
			return b, 0, false
		}
		id += d // wraps as unpackSorted's does; the check below sees it
		if int(id) >= n {
			return b, 0, false
		}
	}
	return b, count, true
}

// packedValues reads the values appendValues packed, one at a time.
type packedValues struct{ b []byte }

func (p *packedValues) next() (uint32, bool) {
	var v uint32
	var ok bool
	p.b, ok = nextUvarint(p.b, &v)
	return v, ok
}

// validRuns reads every value of p as runs of values (a head under
// heads, a length, that many items) with each item under n or, when units
// is set, each run's items runs of their own (a name unit: a string id
// head and its parts' ids).
func validRuns(p *packedValues, heads, n int, units bool) bool {
	for len(p.b) > 0 {
		h, ok := p.next()
		if !ok || int(h) >= heads {
			return false
		}
		length, ok := p.next()
		if !ok {
			return false
		}
		if units {
			// The run's items are name units: a head, a length (so at
			// least two values) and that many parts.
			for left := int(length); left > 0; {
				head, ok := p.next()
				if !ok || int(head) >= n {
					return false
				}
				parts, ok := p.next()
				if !ok || int(parts) > left-2 {
					return false
				}
				if !valuesUnder(p, int(parts), n) {
					return false
				}
				left -= 2 + int(parts)
			}
		} else if !valuesUnder(p, int(length), n) {
			return false
		}
	}
	return true
}

// valuesUnder reads count values of p, each under n.
func valuesUnder(p *packedValues, count, n int) bool {
	for range count {
		if v, ok := p.next(); !ok || int(v) >= n {
			return false
		}
	}
	return true
}
