//go:build race

package hnsw

// The race detector slows the builds four-fold even with dot exempt, so
// -race runs use smaller indexes to stay within a minute; recall itself
// is measured at full size by the ordinary run.
const raceEnabled = true
