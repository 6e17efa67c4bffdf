package hnsw

import "math"

// Vectors are stored as int8 with one float32 scale each (scalar
// quantisation: v ≈ scale·q, scale = max|v|/127), a quarter of float32's
// memory: 330 MB instead of 1.28 GB at 1,000,000 vectors of 320
// dimensions. A query stays float32 (asymmetric scoring: only the stored
// side is rounded); when the query is a stored vector (inserts, repairs),
// it is the vector decoded. For unit vectors the rounding moves a
// similarity by about 0.001, and recall against float32 scores is in
// docs/PERFORMANCE.md.
//
// Similarities are plain loops: no assembly, no cgo. Measured at 320
// dimensions on the 2-core test machine:
//
//   - dot4 scores four vectors in one pass: the query is loaded once for
//     four, and four vectors stream from memory at the same time. Memory,
//     not arithmetic, is what a graph search waits on, and an int8 vector
//     is 5 cache lines instead of 20: four random vectors of a million
//     take ≈ 700 ns against ≈ 1,090 ns in float32.
//   - An int8 becomes a float32 through a 256-entry table (i8f), cheaper
//     than the conversion instruction: in cache, one vector ≈ 99 ns (float32
//     ≈ 94), four ≈ 312 ns (float32 ≈ 240; the conversion ≈ 435).
//   - Within a vector, blocks of four products are summed as a tree before
//     being added, so the adds overlap; with the three-index reslices the
//     compiler drops the bounds checks.
//
// dot and dot4 add in exactly the same order and scale after the sum, so
// a pair gets the same score bit for bit whichever computes it; Exact is
// then an exact oracle for Search, and ties are real ties.
//
// go:norace keeps the race detector out of these loops, which otherwise
// make -race runs 30 times slower (a 1,000-vector build: 10 s instead of
// 0.35 s). Nothing is lost: they only read, and every path that calls them
// also reads the node's state and links, which the detector does check,
// under the same lock.

// i8f[b] is the int8 of bits b as a float32.
var i8f = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(int8(uint8(i)))
	}
	return t
}()

// quantize writes v's int8 codes to q (as long as v) and returns the
// scale that decodes them. v must be finite and not all zero.
func quantize(v []float32, q []int8) float32 {
	var m float32
	for _, f := range v {
		m = max(m, abs32(f))
	}
	scale := m / 127
	inv := 127 / float64(m)
	q = q[:len(v)]
	for i, f := range v {
		q[i] = int8(math.Round(float64(f) * inv))
	}
	return scale
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// decode writes the float32 values of the codes q at scale to out.
func decode(q []int8, scale float32, out []float32) []float32 {
	out = out[:len(q)]
	for i, c := range q {
		out[i] = i8f[uint8(c)] * scale
	}
	return out
}

// dot returns the dot product of q and the codes a, unscaled; a must be
// as long as q.
//
//go:norace
func dot(q []float32, a []int8) float32 {
	a = a[:len(q)]
	t := &i8f
	var s float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		qq := q[i : i+4 : i+4]
		aa := a[i : i+4 : i+4]
		s += (qq[0]*t[uint8(aa[0])] + qq[1]*t[uint8(aa[1])]) + (qq[2]*t[uint8(aa[2])] + qq[3]*t[uint8(aa[3])])
	}
	for ; i < len(q); i++ {
		s += q[i] * t[uint8(a[i])]
	}
	return s
}

// dot4 returns the unscaled dot products of q with the codes a, b, c and d.
//
//go:norace
func dot4(q []float32, a, b, c, d []int8) (sa, sb, sc, sd float32) {
	n := len(q)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n]
	t := &i8f
	i := 0
	for ; i+4 <= n; i += 4 {
		qq := q[i : i+4 : i+4]
		aa := a[i : i+4 : i+4]
		bb := b[i : i+4 : i+4]
		cc := c[i : i+4 : i+4]
		dd := d[i : i+4 : i+4]
		sa += (qq[0]*t[uint8(aa[0])] + qq[1]*t[uint8(aa[1])]) + (qq[2]*t[uint8(aa[2])] + qq[3]*t[uint8(aa[3])])
		sb += (qq[0]*t[uint8(bb[0])] + qq[1]*t[uint8(bb[1])]) + (qq[2]*t[uint8(bb[2])] + qq[3]*t[uint8(bb[3])])
		sc += (qq[0]*t[uint8(cc[0])] + qq[1]*t[uint8(cc[1])]) + (qq[2]*t[uint8(cc[2])] + qq[3]*t[uint8(cc[3])])
		sd += (qq[0]*t[uint8(dd[0])] + qq[1]*t[uint8(dd[1])]) + (qq[2]*t[uint8(dd[2])] + qq[3]*t[uint8(dd[3])])
	}
	for ; i < n; i++ {
		sa += q[i] * t[uint8(a[i])]
		sb += q[i] * t[uint8(b[i])]
		sc += q[i] * t[uint8(c[i])]
		sd += q[i] * t[uint8(d[i])]
	}
	return sa, sb, sc, sd
}

// sim returns the similarity of q and the vector of slot s.
func (x *Index) sim(q []float32, s uint32) float32 {
	return dot(q, x.vec(s)) * x.scales[s]
}

// sim4 returns the similarities of q and the vectors of four slots.
func (x *Index) sim4(q []float32, s []uint32) (a, b, c, d float32) {
	s = s[:4:4]
	a, b, c, d = dot4(q, x.vec(s[0]), x.vec(s[1]), x.vec(s[2]), x.vec(s[3]))
	return a * x.scales[s[0]], b * x.scales[s[1]], c * x.scales[s[2]], d * x.scales[s[3]]
}

// dots sets out[i] to the similarity of q and the vector of slots[i].
func (x *Index) dots(q []float32, slots []uint32, out []float32) {
	i := 0
	for ; i+4 <= len(slots); i += 4 {
		out[i], out[i+1], out[i+2], out[i+3] = x.sim4(q, slots[i:i+4])
	}
	// One to three left: padded to four with the last one, as two vectors
	// streaming together still beat one after the other.
	switch len(slots) - i {
	case 1:
		out[i] = x.sim(q, slots[i])
	case 2:
		s := [4]uint32{slots[i], slots[i+1], slots[i+1], slots[i+1]}
		out[i], out[i+1], _, _ = x.sim4(q, s[:])
	case 3:
		s := [4]uint32{slots[i], slots[i+1], slots[i+2], slots[i+2]}
		out[i], out[i+1], out[i+2], _ = x.sim4(q, s[:])
	}
}

// decoded returns slot s's vector as float32 in buf, for a stored vector
// used as a query.
func (x *Index) decoded(s uint32, buf *[]float32) []float32 {
	if cap(*buf) < x.dim {
		*buf = make([]float32, x.dim)
	}
	*buf = decode(x.vec(s), x.scales[s], (*buf)[:x.dim])
	return *buf
}
