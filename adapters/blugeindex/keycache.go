package blugeindex

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
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
//
// Beside the ids it keeps each segment's name units, the documents' one
// after the other in document order (segmentNames): rescoring by name
// coverage reads them for tens of thousands of candidates per hybrid
// search at a million resources, in document order, and reaching each
// through its key and analysis (parsing the id, hashing two strings, then
// three pointers apart in the heap) was most of its time. A document of a
// segment is one version of a resource; while it is live the lexicon
// holds that version's analysis (or one of the same hash, with the same
// name units), so what is copied stays right while a search can reach the
// document. The units are string-table ids of one lexicon: another
// (Resume, a rebuild) copies them again.
type keyCache struct {
	mu   sync.Mutex
	segs map[segment.Segment]*segmentCache
	lex  *lexicon // the lexicon the names were copied from
}

type segmentCache struct {
	ids   *idTable
	names *segmentNames
}

// idTable holds the _id of every document of a segment, one after the
// other in one string: a string per document was a million heap objects
// and a million pointers for the collector to follow at a million
// resources.
type idTable struct {
	all string
	at  []uint32 // document n's id is all[at[n]:at[n+1]]
}

// id returns the id of document n.
func (t *idTable) id(n uint64) string { return t.all[t.at[n]:t.at[n+1]] }

// count returns the number of documents.
func (t *idTable) count() int { return len(t.at) - 1 }

// segmentNames are the name units of a segment's documents: document n's
// are units[at[n]:at[n+1]], per name its language's index in analysed,
// its length, then its units (docAnalysis.names). A document the
// lexicon does not hold (deleted since) has none.
type segmentNames struct {
	at    []uint32
	units []uint32
}

// namesOf copies the name units of the documents ids names from lex.
func namesOf(ids *idTable, lex *lexicon) *segmentNames {
	sn := &segmentNames{at: make([]uint32, ids.count()+1)}
	for n := range ids.count() {
		sn.at[n] = uint32(len(sn.units))
		key, ok := parseKey(ids.id(uint64(n)))
		if !ok {
			continue
		}
		d := lex.docs[key]
		if d == nil {
			continue
		}
		sn.units = d.appendNames(sn.units)
	}
	sn.at[ids.count()] = uint32(len(sn.units))
	return sn
}

// docIDs maps a snapshot's document numbers to their stored _id and their
// name units.
type docIDs struct {
	offsets []uint64 // the first document number of each segment
	ids     []*idTable
	names   []*segmentNames
}

// of returns the ids of a snapshot's documents and their name units,
// reading the segments not seen yet; ok is false when the snapshot is not
// bluge's own. lex is the lexicon searched with the snapshot.
func (kc *keyCache) of(snap blugesearch.Reader, lex *lexicon) (*docIDs, bool, error) {
	return kc.lookup(snap, lex)
}

// rebase tells the cache that lexicon to replaces from (change.Extend's
// copy at its commit), whose string ids and live documents' names it
// keeps: names copied from from need not be copied again.
func (kc *keyCache) rebase(from, to *lexicon) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.lex == from {
		kc.lex = to
	}
}

// idsOf is of without the name units (docIDs.coverage is not to be
// asked): ordering candidates by key needs the ids alone, and a search
// that never rescores by name need not copy every name (124 MB at a
// million resources).
func (kc *keyCache) idsOf(snap blugesearch.Reader) (*docIDs, bool, error) {
	return kc.lookup(snap, nil)
}

// lookup is of, with the names only when lex is set.
func (kc *keyCache) lookup(snap blugesearch.Reader, lex *lexicon) (*docIDs, bool, error) {
	s, ok := snap.(*index.Snapshot)
	if !ok {
		return nil, false, nil
	}
	segs := s.Segments()
	d := &docIDs{offsets: make([]uint64, len(segs)), ids: make([]*idTable, len(segs)), names: make([]*segmentNames, len(segs))}
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.segs == nil {
		kc.segs = map[segment.Segment]*segmentCache{}
	}
	if lex != nil && kc.lex != lex {
		for seg, c := range kc.segs {
			kc.segs[seg] = &segmentCache{ids: c.ids}
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
			c = &segmentCache{ids: ids}
			kc.segs[seg] = c
		}
		if lex != nil && c.names == nil {
			c.names = namesOf(c.ids, lex)
		}
		d.offsets[i], d.ids[i], d.names[i] = running, c.ids, c.names
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
// too: their numbers are never asked for) from its doc values (bluge makes
// _id sortable). The stored fields hold it too, but beside the resource
// itself (_src): reading them decompressed every resource and left the
// whole segment file resident, 0.8 GB of mapped pages at a million.
func segmentIDs(seg segment.Segment) (*idTable, error) {
	t := &idTable{at: make([]uint32, 1, seg.Count()+1)}
	var all strings.Builder
	dv, err := seg.DocumentValueReader([]string{"_id"})
	if err != nil {
		return nil, fmt.Errorf("blugeindex: read ids: %w", err)
	}
	for n := range seg.Count() {
		err := dv.VisitDocumentValues(n, func(_ string, term []byte) {
			all.Write(term)
		})
		if err != nil {
			return nil, fmt.Errorf("blugeindex: read ids: %w", err)
		}
		if all.Len() > math.MaxUint32 {
			return nil, errors.New("blugeindex: read ids: over 4 GB of ids in one segment")
		}
		t.at = append(t.at, uint32(all.Len()))
	}
	t.all = all.String()
	if all.Cap() > all.Len()+all.Len()/8 {
		t.all = strings.Clone(t.all) // not the builder's spare capacity
	}
	return t, nil
}

// id returns the _id of a document of the snapshot.
func (d *docIDs) id(doc uint64) string {
	i := d.segment(doc)
	return d.ids[i].id(doc - d.offsets[i])
}

// segment returns the index of the segment holding doc.
func (d *docIDs) segment(doc uint64) int {
	return sort.Search(len(d.offsets), func(i int) bool { return d.offsets[i] > doc }) - 1
}

// coverage returns the name coverage of a live document of the snapshot
// by cq, as coverage of its analysis.
func (d *docIDs) coverage(doc uint64, cq *coverQuery) float64 {
	i := d.segment(doc)
	sn, n := d.names[i], doc-d.offsets[i]
	return flatCoverage(sn.units[sn.at[n]:sn.at[n+1]], cq)
}
