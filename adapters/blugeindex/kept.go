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
func nextUvarint(b []byte, v *uint32) ([]byte, bool) {
	x, n := binary.Uvarint(b)
	if n <= 0 || x > 1<<32-1 {
		return b, false
	}
	*v = uint32(x)
	return b[n:], true
}

// validPacked tells whether packed kept unpacks to the layouts validKept
// and validThes accept, with string ids under n. scratch is reused for the
// unpacked values.
func validPacked(kept []byte, n int, scratch []uint32) ([]uint32, bool) {
	all, ok := appendWords(scratch[:0], kept)
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
		return all, false
	}
	_, _, thes, _ := keptParts(kept)
	return all, len(thes) == 0 || (ne > nn && validThes(all[nn:ne], all[ne:], n))
}
