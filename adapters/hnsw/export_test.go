package hnsw

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExportVectors writes the vectors of the benchmarks (skewed 10k and
// 100k, their 100 queries and the exact top 10 of each) for
// test/hnswlib/compare.sh, so hnswlib-node is measured on exactly the
// vectors our index is. It runs only when HNSW_EXPORT_DIR is set:
//
//	HNSW_EXPORT_DIR=/tmp/vecs go test -run TestExportVectors ./adapters/hnsw/
//
// Per set NAME: NAME.base.f32 and NAME.query.f32 (rows of dim float32,
// little endian), NAME.truth.u32 (10 row numbers per query, best first)
// and NAME.json (n, queries, dim, k).
func TestExportVectors(t *testing.T) {
	dir := os.Getenv("HNSW_EXPORT_DIR")
	if dir == "" {
		t.Skip("HNSW_EXPORT_DIR not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*benchSet{"skewed10k": skewed10k, "skewed100k": skewed100k} {
		s.data()
		write := func(ext string, b []byte) {
			if err := os.WriteFile(filepath.Join(dir, name+ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(".base.f32", floats(s.vs))
		write(".query.f32", floats(s.qs))
		var truth []byte
		for _, rs := range s.truth {
			for _, r := range rs {
				row, err := strconv.Atoi(strings.TrimPrefix(r.ID, "r"))
				if err != nil {
					t.Fatal(err)
				}
				truth = binary.LittleEndian.AppendUint32(truth, uint32(row))
			}
		}
		write(".truth.u32", truth)
		meta, _ := json.Marshal(map[string]int{"n": len(s.vs), "queries": len(s.qs), "dim": dim, "k": 10})
		write(".json", meta)
	}
}

func floats(vs [][]float32) []byte {
	out := make([]byte, 0, len(vs)*dim*4)
	for _, v := range vs {
		for _, f := range v {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	}
	return out
}
