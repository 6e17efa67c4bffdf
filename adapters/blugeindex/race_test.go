//go:build race

package blugeindex

// The race detector slows the equality tests (thousands of searches both
// ways, and for core/search the HNSW builds) several-fold: -race runs ask
// fewer questions, the ordinary run asks them all.
const raceEnabled = true
