package blugeindex

import (
	"fmt"
	"sort"
	"sync"

	"github.com/blugelabs/bluge/index"
	blugesearch "github.com/blugelabs/bluge/search"
	segment "github.com/blugelabs/bluge_segment_api"
)

// keyCache keeps, per index segment, the stored _id of every document by
// its number in the segment: a segment never changes once written, so its
// ids are read once (a few seconds for a million documents) instead of
// decoding a stored document for each candidate a search looks at, which
// RankedPrefix does for thousands of them to rescore them by name coverage.
// Segments that left the index are dropped at the next lookup.
type keyCache struct {
	mu   sync.Mutex
	segs map[segment.Segment][]string
}

// docIDs maps a snapshot's document numbers to their stored _id.
type docIDs struct {
	offsets []uint64 // the first document number of each segment
	ids     [][]string
}

// of returns the ids of a snapshot's documents, reading the segments not
// seen yet; ok is false when the snapshot is not bluge's own.
func (kc *keyCache) of(snap blugesearch.Reader) (*docIDs, bool, error) {
	s, ok := snap.(*index.Snapshot)
	if !ok {
		return nil, false, nil
	}
	segs := s.Segments()
	d := &docIDs{offsets: make([]uint64, len(segs)), ids: make([][]string, len(segs))}
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.segs == nil {
		kc.segs = map[segment.Segment][]string{}
	}
	live := make(map[segment.Segment]bool, len(segs))
	running := uint64(0)
	for i, ss := range segs {
		w, ok := ss.(interface{ Segment() segment.Segment })
		if !ok {
			return nil, false, nil
		}
		seg := w.Segment()
		live[seg] = true
		ids, ok := kc.segs[seg]
		if !ok {
			var err error
			if ids, err = segmentIDs(seg); err != nil {
				return nil, false, err
			}
			kc.segs[seg] = ids
		}
		d.offsets[i], d.ids[i] = running, ids
		running += seg.Count() // as bluge numbers documents across segments
	}
	for seg := range kc.segs {
		if !live[seg] {
			delete(kc.segs, seg)
		}
	}
	return d, true, nil
}

// segmentIDs reads the _id of every document of a segment (deleted ones
// too: their numbers are never asked for).
func segmentIDs(seg segment.Segment) ([]string, error) {
	ids := make([]string, seg.Count())
	for n := range ids {
		err := seg.VisitStoredFields(uint64(n), func(field string, value []byte) bool {
			if field == "_id" {
				ids[n] = string(value)
				return false
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("blugeindex: read ids: %w", err)
		}
	}
	return ids, nil
}

// id returns the _id of a document of the snapshot.
func (d *docIDs) id(doc uint64) string {
	i := sort.Search(len(d.offsets), func(i int) bool { return d.offsets[i] > doc }) - 1
	return d.ids[i][doc-d.offsets[i]]
}
