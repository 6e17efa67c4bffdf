package hnsw

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

const dim = 320

// roundingTol bounds how far the int8 codes move a unit vector's
// similarity to itself from 1 (dot.go; about 0.001 in practice).
const roundingTol = 0.005

// uniformVecs returns n random unit vectors, uniform on the sphere: the
// "random normalised vectors" of the brief, and the worst case for any
// graph index (see the package comment).
func uniformVecs(r *rand.Rand, n int) [][]float32 { return gaussianVecs(r, n, 0) }

// skewedVecs returns n random unit vectors whose coordinate j has variance
// 1/(j+1) before normalising. Real text embeddings are like that: their
// variance sits in a few dozen directions (here the participation ratio
// (Σλ)²/Σλ² is about 25), which is what gives them neighbourhoods a graph
// can navigate.
func skewedVecs(r *rand.Rand, n int) [][]float32 { return gaussianVecs(r, n, 1) }

func gaussianVecs(r *rand.Rand, n int, alpha float64) [][]float32 {
	sd := make([]float64, dim)
	for j := range sd {
		sd[j] = math.Pow(float64(j+1), -alpha/2)
	}
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		var ss float64
		for j := range v {
			f := r.NormFloat64() * sd[j]
			v[j] = float32(f)
			ss += f * f
		}
		inv := 1 / math.Sqrt(ss)
		for j := range v {
			v[j] = float32(float64(v[j]) * inv)
		}
		out[i] = v
	}
	return out
}

func idOf(i int) string { return "r" + strconv.Itoa(i) }

// build adds vs as r0, r1, ...
func build(t testing.TB, idx *Index, vs [][]float32) {
	t.Helper()
	for i, v := range vs {
		if err := idx.Add(idOf(i), v); err != nil {
			t.Fatal(err)
		}
	}
}

// recallAt is the share of Exact's top k that Search finds, over queries.
func recallAt(idx *Index, queries [][]float32, k int) float64 {
	var hit, all int
	for _, q := range queries {
		want := map[string]bool{}
		for _, r := range idx.Exact(q, k) {
			want[r.ID] = true
		}
		for _, r := range idx.Search(q, k) {
			if want[r.ID] {
				hit++
			}
		}
		all += len(want)
	}
	return float64(hit) / float64(all)
}

// exactFloat is the true top k of vs for q in float64 arithmetic on the
// float32 vectors as given, before any quantisation: what recall is
// measured against when the stored vectors' rounding must count too.
func exactFloat(vs [][]float32, q []float32, k int) []Result {
	h := make(worstFirst, 0, k)
	for i, v := range vs {
		var s float64
		for j, f := range v {
			s += float64(f) * float64(q[j])
		}
		h.offer(Result{idOf(i), float32(s)}, k)
	}
	slices.SortFunc(h, compareResults)
	return h
}

// trueRecall is the share of float32's true top k (exactFloat) that find
// returns, over queries.
func trueRecall(vs, queries [][]float32, k int, find func([]float32, int) []Result) float64 {
	var hit, all int
	for _, q := range queries {
		want := map[string]bool{}
		for _, r := range exactFloat(vs, q, k) {
			want[r.ID] = true
		}
		for _, r := range find(q, k) {
			if want[r.ID] {
				hit++
			}
		}
		all += len(want)
	}
	return float64(hit) / float64(all)
}
