package hnsw

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// A rotation is applied to every vector before it is quantised, and to
// every query, so the int8 codes of dot.go round evenly: an embedding
// whose length sits in a few coordinates has a large max|v|, hence a
// coarse step for all the others, and loses its true neighbours to the
// rounding (recall@10 of an exact scan against float32's answers 0.980 on
// the skewed test vectors, 0.99x rotated; PERFORMANCE.md has the
// figures). An orthogonal map keeps every dot product, so scores mean
// what they meant.
//
// The map is structured, not a dense matrix (which would cost dim² per
// query): coordinates are permuted and their signs flipped at random, then
// each block of a power-of-two size (dim's binary digits, largest first:
// 320 = 256 + 64) goes through a normalised Walsh–Hadamard transform,
// which spreads a coordinate's weight over its whole block in
// O(dim·log dim) additions, about a microsecond at 320. The permutation
// and signs come from a fixed seed and the dimension, so every index of a
// dimension, and every build of this code, rotates alike.
type rotation struct {
	perm   []int32
	sign   []float32
	blocks []int // sizes, summing to dim
}

// rotationSeed fixes the permutation and signs; changing it changes the
// codes of every kept snapshot, which would then need a new version.
const rotationSeed = 0x5eed_c11a_7e5e

func newRotation(dim int) *rotation {
	r := rand.New(rand.NewPCG(rotationSeed, uint64(dim)))
	rt := &rotation{perm: make([]int32, dim), sign: make([]float32, dim)}
	for i, p := range r.Perm(dim) {
		rt.perm[i] = int32(p)
	}
	for i := range rt.sign {
		rt.sign[i] = float32(1 - 2*int(r.IntN(2)))
	}
	for d := dim; d > 0; {
		b := 1 << (bits.Len(uint(d)) - 1)
		rt.blocks = append(rt.blocks, b)
		d -= b
	}
	return rt
}

// apply writes the rotated v to out (as long as v; not v itself).
func (rt *rotation) apply(v, out []float32) []float32 {
	out = out[:len(v)]
	for i, p := range rt.perm {
		out[i] = rt.sign[i] * v[p]
	}
	off := 0
	for _, n := range rt.blocks {
		hadamard(out[off : off+n])
		off += n
	}
	return out
}

// hadamard applies the normalised Walsh–Hadamard transform to v, whose
// length is a power of two, in place.
func hadamard(v []float32) {
	n := len(v)
	for h := 1; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			a, b := v[i:i+h], v[i+h:i+2*h]
			for j := range a {
				a[j], b[j] = a[j]+b[j], a[j]-b[j]
			}
		}
	}
	if n > 1 {
		f := float32(1 / math.Sqrt(float64(n)))
		for i := range v {
			v[i] *= f
		}
	}
}
