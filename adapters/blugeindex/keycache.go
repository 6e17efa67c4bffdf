package blugeindex

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

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
//
// Beside the ids it keeps a slot per document for its analysis, filled
// the first time a search rescores the document (by its key in the
// lexicon's docs): rescoring reads the analyses of tens of thousands of
// candidates per hybrid search at a million resources, and finding each
// by its key (parsing the id, hashing two strings) was a third of it. A
// document of a segment is one version of a resource; while it is live
// the lexicon holds that version's analysis (or one of the same hash,
// equal in what rescoring reads), so a slot never goes stale while a
// search can reach its document. The slots belong to one lexicon: another
// (Resume, a rebuild) starts them empty.
type keyCache struct {
	mu   sync.Mutex
	segs map[segment.Segment]*segmentCache
	lex  *lexicon // the lexicon the slots were filled from
}

type segmentCache struct {
	ids   []string
	slots []atomic.Pointer[docAnalysis]
}

// docIDs maps a snapshot's document numbers to their stored _id and their
// analysis.
type docIDs struct {
	offsets []uint64 // the first document number of each segment
	ids     [][]string
	slots   [][]atomic.Pointer[docAnalysis]
	lex     *lexicon
}

// of returns the ids of a snapshot's documents, reading the segments not
// seen yet; ok is false when the snapshot is not bluge's own. lex is the
// lexicon searched with the snapshot.
func (kc *keyCache) of(snap blugesearch.Reader, lex *lexicon) (*docIDs, bool, error) {
	s, ok := snap.(*index.Snapshot)
	if !ok {
		return nil, false, nil
	}
	segs := s.Segments()
	d := &docIDs{offsets: make([]uint64, len(segs)), ids: make([][]string, len(segs)), slots: make([][]atomic.Pointer[docAnalysis], len(segs)), lex: lex}
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.segs == nil {
		kc.segs = map[segment.Segment]*segmentCache{}
	}
	if kc.lex != lex {
		for seg, c := range kc.segs {
			kc.segs[seg] = &segmentCache{ids: c.ids, slots: make([]atomic.Pointer[docAnalysis], len(c.ids))}
		}
		kc.lex = lex
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
		c, ok := kc.segs[seg]
		if !ok {
			ids, err := segmentIDs(seg)
			if err != nil {
				return nil, false, err
			}
			c = &segmentCache{ids: ids, slots: make([]atomic.Pointer[docAnalysis], len(ids))}
			kc.segs[seg] = c
		}
		d.offsets[i], d.ids[i], d.slots[i] = running, c.ids, c.slots
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
	i := d.segment(doc)
	return d.ids[i][doc-d.offsets[i]]
}

// segment returns the index of the segment holding doc.
func (d *docIDs) segment(doc uint64) int {
	return sort.Search(len(d.offsets), func(i int) bool { return d.offsets[i] > doc }) - 1
}

// analysis returns the analysis of a live document of the snapshot (nil
// when the lexicon has none), from its slot once looked up.
func (d *docIDs) analysis(doc uint64) (*docAnalysis, error) {
	i := d.segment(doc)
	slot := &d.slots[i][doc-d.offsets[i]]
	if a := slot.Load(); a != nil {
		return a, nil
	}
	key, ok := parseKey(d.ids[i][doc-d.offsets[i]])
	if !ok {
		return nil, fmt.Errorf("blugeindex: hit without a valid key (doc %d)", doc)
	}
	a := d.lex.docs[key]
	if a != nil {
		slot.Store(a)
	}
	return a, nil
}
