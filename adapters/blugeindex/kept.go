package blugeindex

import "encoding/binary"

// An indexed document keeps its words and name units (docAnalysis.kept)
// packed as unsigned varints: at a million documents they were the largest
// part of the lexicon (78 uint32 a document, 310 bytes), while the values
// are string table ids that fit in one or two bytes and small counts. The
// words of a language are kept sorted, as differences: they only answer
// whether a document holds one of some words (holdsAny).
//
// The packed layout: the length in bytes of the words part, the words part
// (per language group: its index in languages, the number of words, the
// differences of the sorted string ids), then the names part (the name
// groups as flatNames lays them out behind their language's index in
// analysed and their length, each value as it is). Unpacked, the two parts
// have the layout words and names return.

// packKept packs unpacked words and names (each group of words sorted)
// into a slice of its own. scratch is reused for the words part.
func packKept(words, names []uint32, scratch []byte) (kept, _ []byte) {
	w := scratch[:0]
	for i := 0; i < len(words); {
		li, ids, next := unitAt(words, i)
		w = binary.AppendUvarint(w, uint64(li))
		w = binary.AppendUvarint(w, uint64(len(ids)))
		prev := uint32(0)
		for _, id := range ids {
			w = binary.AppendUvarint(w, uint64(id-prev))
			prev = id
		}
		i = next
	}
	size := uvarintLen(uint32(len(w))) + len(w)
	for _, v := range names {
		size += uvarintLen(v)
	}
	kept = make([]byte, 0, size)
	kept = binary.AppendUvarint(kept, uint64(len(w)))
	kept = append(kept, w...)
	for _, v := range names {
		kept = binary.AppendUvarint(kept, uint64(v))
	}
	return kept, w
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
	w, _, ok := keptParts(kept)
	if !ok {
		return dst, false
	}
	for len(w) > 0 {
		var li, n uint32
		if w, ok = nextUvarint(w, &li); !ok {
			return dst, false
		}
		if w, ok = nextUvarint(w, &n); !ok || int(n) > len(w) {
			return dst, false
		}
		dst = append(dst, li, n)
		id := uint32(0)
		for range n {
			var d uint32
			if w, ok = nextUvarint(w, &d); !ok {
				return dst, false
			}
			id += d
			dst = append(dst, id)
		}
	}
	return dst, true
}

// appendNames appends the unpacked name units of packed kept to dst (see
// docAnalysis.names).
func appendNames(dst []uint32, kept []byte) (_ []uint32, ok bool) {
	_, b, ok := keptParts(kept)
	if !ok {
		return dst, false
	}
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

// keptParts splits packed kept into its words and names parts.
func keptParts(kept []byte) (words, names []byte, ok bool) {
	var n uint32
	rest, ok := nextUvarint(kept, &n)
	if !ok || int(n) > len(rest) {
		return nil, nil, false
	}
	return rest[:n], rest[n:], true
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

// validPacked tells whether packed kept unpacks to docAnalysis.kept's
// layout with string ids under n (validKept). scratch is reused for the
// unpacked values.
func validPacked(kept []byte, n int, scratch []uint32) ([]uint32, bool) {
	words, ok := appendWords(scratch[:0], kept)
	if !ok {
		return words, false
	}
	at := len(words)
	all, ok := appendNames(words, kept)
	return all, ok && validKept(all[:at], all[at:], n)
}
