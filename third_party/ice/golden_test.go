package ice

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
)

// upstreamSums are the SHA-256 of the segments ice v1.0.0 itself builds
// from the documents of segmentCases (ICE_PRINT_SUMS=1 prints them). The
// patched build (PATCHES.md) must write the very same bytes.
var upstreamSums = map[string]string{
	"fields/1024":  "b86b7ab08c38e559bb6f755a148d709c87a1d467cdd20d6185d1354b631f78ba",
	"fields/1025":  "eee41c6cb92bbb8296777dcdc4b63d604d391698d6edf5ea4417ea4d8b214e86",
	"fieldsB/1024": "945a9100bce1db0d205befe571c7921e96e60a1adfc43224c6ad6919c7f8b22a",
	"fieldsB/1025": "99978ba45ae9a680e990e81dc9a106982a348f3d7913a2368a22510cc702e431",
	"many/1024":    "93d411d502a1b81acd8ae35ab4a61c092f02a57b2136ea0564db290a7772ec15",
	"many/1025":    "f6ad43e7bc5a48255e83c072fd95944b87c9fe59f74c49ae87faeb91c26f4421",
	"multi/1024":   "9995d1b4bca863f9c10ea830d89da13fdeba61504e94cd0ef84815d5b257cfa5",
	"multi/1025":   "fdfab39a18700a8ad7f09352c82f6d2bff56854b1f111bb72b025c4ec0960901",
}

// segmentCases are documents of every shape the builder handles: stored
// fields, doc values, term locations, composite fields, a field name
// repeated in one document (its terms met twice, with their locations),
// and enough documents for several chunks.
func segmentCases() map[string][]segment.Document {
	words := []string{"wall", "board", "concrete", "steel", "wool", "glass", "timber", "brick", "tile", "roof", "floor", "paint"}
	rnd := rand.New(rand.NewSource(7))
	text := func(n int) string {
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rnd.Intn(len(words))])
		}
		return b.String()
	}
	var many []segment.Document
	for i := 0; i < 3000; i++ {
		doc := &FakeDocument{
			NewFakeField("_id", fmt.Sprintf("d%05d", i), true, false, false),
			NewFakeField("name", text(1+rnd.Intn(4)), i%3 == 0, i%2 == 0, i%5 == 0),
			NewFakeField("desc", text(5+rnd.Intn(20)), false, i%4 == 0, false),
			NewFakeField("tag", text(1+rnd.Intn(2)), true, true, true),
		}
		if i%7 == 0 {
			*doc = append(*doc, NewFakeField("tag", text(1+rnd.Intn(3)), true, true, true))
		}
		if i%11 == 0 {
			*doc = append(*doc, NewFakeField("desc", text(3), false, false, false))
		}
		if i%2 == 1 {
			doc.FakeComposite("_all", []string{"_id"})
		}
		if i%13 == 0 { // a composite field twice: its terms met again
			doc.FakeComposite("_all", []string{"_id"})
		}
		many = append(many, doc)
	}
	return map[string][]segment.Document{
		"multi":   buildTestAnalysisResultsMulti(),
		"fields":  buildTestAnalysisResultsMultiWithDifferentFields(true, true),
		"fieldsB": buildTestAnalysisResultsMultiWithDifferentFields(false, true),
		"many":    many,
	}
}

func TestSegmentBytesAsUpstream(t *testing.T) {
	for name, docs := range segmentCases() {
		for _, mode := range []uint32{defaultChunkMode, legacyChunkMode} {
			seg, _, err := newWithChunkMode(docs, encodeNorm, mode)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := seg.(*Segment).WriteTo(&buf, nil); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(buf.Bytes())
			key := fmt.Sprintf("%s/%d", name, mode)
			got := hex.EncodeToString(sum[:])
			if os.Getenv("ICE_PRINT_SUMS") != "" {
				fmt.Printf("\t%q: %q,\n", key, got)
				continue
			}
			if want := upstreamSums[key]; got != want {
				t.Errorf("%s: the segment's bytes differ from ice v1.0.0's (sha256 %s, want %s)", key, got, want)
			}
		}
	}
}

// upstreamMergeSums are the SHA-256 of the segments ice v1.0.0 merges from
// the parts of segmentCases' documents (ICE_PRINT_SUMS=1
// prints them). The patched merge (PATCHES.md) must write the same bytes.
var upstreamMergeSums = map[string]string{
	"fields/1024/drops=false":  "bebd4b11f02f6f962d6e78d0286580ec10d26fd813967a6099a1629ba7715dc5",
	"fields/1024/drops=true":   "9263d448f3b5943e3c2ac925f2a14cbaf46353d258c50a1d0f43e5af955fa882",
	"fields/1025/drops=false":  "bebd4b11f02f6f962d6e78d0286580ec10d26fd813967a6099a1629ba7715dc5",
	"fields/1025/drops=true":   "9263d448f3b5943e3c2ac925f2a14cbaf46353d258c50a1d0f43e5af955fa882",
	"fieldsB/1024/drops=false": "0693cd0d2d946cf60d3ac44dc985ff21da3d9bc05a2a163d87325464b1b64173",
	"fieldsB/1024/drops=true":  "28dd3ef2166a0ed2f6d379e83ac3421b155da5afff183fff9116aa3382ca457f",
	"fieldsB/1025/drops=false": "0693cd0d2d946cf60d3ac44dc985ff21da3d9bc05a2a163d87325464b1b64173",
	"fieldsB/1025/drops=true":  "28dd3ef2166a0ed2f6d379e83ac3421b155da5afff183fff9116aa3382ca457f",
	"many/1024/drops=false":    "696c0c88a2680c1e0e96df18f236bdfc0971ed02156870ee0fe1da30fc246bdc",
	"many/1024/drops=true":     "c3fb4a274f3f1cc7e0154539241d43f892834beed22e3aa75dc93e3de2dba7b7",
	"many/1025/drops=false":    "696c0c88a2680c1e0e96df18f236bdfc0971ed02156870ee0fe1da30fc246bdc",
	"many/1025/drops=true":     "c3fb4a274f3f1cc7e0154539241d43f892834beed22e3aa75dc93e3de2dba7b7",
	"multi/1024/drops=false":   "9b9a14e2051f3706ea1d745478b2c357f4c564e4e4ffcd5668f54e3277f90cad",
	"multi/1024/drops=true":    "09e00f80cce5c2a841c3e604ab9b6c3fb932299db4141245ab76833f4cf99ced",
	"multi/1025/drops=false":   "9b9a14e2051f3706ea1d745478b2c357f4c564e4e4ffcd5668f54e3277f90cad",
	"multi/1025/drops=true":    "09e00f80cce5c2a841c3e604ab9b6c3fb932299db4141245ab76833f4cf99ced",
}

// TestMergedBytesAsUpstream cuts each case's documents into three segments
// and merges them without drops, and with every third document of the first
// segment and every fifth of the last dropped.
func TestMergedBytesAsUpstream(t *testing.T) {
	for name, docs := range segmentCases() {
		for _, mode := range []uint32{defaultChunkMode, legacyChunkMode} {
			var segs []segment.Segment
			third := (len(docs) + 2) / 3
			for from := 0; from < len(docs); from += third {
				to := from + third
				if to > len(docs) {
					to = len(docs)
				}
				seg, _, err := newWithChunkMode(docs[from:to], encodeNorm, mode)
				if err != nil {
					t.Fatal(err)
				}
				segs = append(segs, seg)
			}
			for _, dropped := range []bool{false, true} {
				drops := make([]*roaring.Bitmap, len(segs))
				if dropped {
					drops[0], drops[len(segs)-1] = roaring.New(), roaring.New()
					for d := uint32(0); d < uint32(segs[0].Count()); d += 3 {
						drops[0].Add(d)
					}
					for d := uint32(0); d < uint32(segs[len(segs)-1].Count()); d += 5 {
						drops[len(segs)-1].Add(d)
					}
				}
				var buf bytes.Buffer
				if _, err := Merge(segs, drops, 1<<16).WriteTo(&buf, nil); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(buf.Bytes())
				key := fmt.Sprintf("%s/%d/drops=%v", name, mode, dropped)
				got := hex.EncodeToString(sum[:])
				if os.Getenv("ICE_PRINT_SUMS") != "" {
					fmt.Printf("\t%q: %q,\n", key, got)
					continue
				}
				if want := upstreamMergeSums[key]; got != want {
					t.Errorf("%s: the merged segment's bytes differ from ice v1.0.0's (sha256 %s, want %s)", key, got, want)
				}
			}
		}
	}
}
