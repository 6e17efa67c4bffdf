package blugeindex

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge/index"
	blugesearch "github.com/blugelabs/bluge/search"
	segment "github.com/blugelabs/bluge_segment_api"
)

// Block-max postings (Ding and Suel, 2011) for the pruned top-k.
//
// bluge's postings (ice) can only be read one posting after another: an
// Advance walks every posting it passes, so walk (topk.go) reads the whole
// postings list of a common term ("concrete" is in 160,000 names at
// 1,000,000 resources) however high its threshold. A segment never changes
// once written, so the postings of a long list are decoded once per segment
// and kept here: the documents as an array (an advance is a binary search),
// each posting's frequency and length through a small table of the list's
// distinct (frequency, length) pairs, and per block of blockSize postings
// the largest frequency and the shortest length. bluge's BM25 grows with
// the frequency and shrinks with the length, so the score of a block's
// largest frequency at its shortest length bounds every score in the block
// whatever the query's weight and the field's average length (which change
// with every commit, see liveBM25). walk skips the blocks whose bounds
// cannot reach its threshold, and bounds each clause by its list's best
// block instead of its weight.
//
// Deleted documents stay in the arrays (a segment's deletions grow while
// the segment lives) and are skipped while reading, as ice skips them; a
// bound that counts them is still a bound. Pieces of segments that left
// the index are dropped at the next lookup of a newer snapshot, and the
// least recently used are dropped when the cache would pass its budget.

// blockSize is how many postings share a block bound.
const blockSize = 32

// Defaults of the block cache: lists shorter than blockMinLen (over the
// whole snapshot) are read from bluge, where they cost little; the cache
// keeps at most blockMaxBytes of decoded postings.
const (
	blockMinLen   = 2048
	blockMaxBytes = 256 << 20
)

// impact is one (frequency, length) pair of a postings list.
type impact struct {
	freq uint32
	dl   uint32 // the field's length in terms (the norm's bits, see liveBM25)
}

// numTiers is how many parts a segment's long postings list is split in by
// impact: the postings of its best (frequency, length) pairs, about a
// sixteenth of the list, then the next ones up to a quarter, then the
// rest. Each part is a postings list of its own for walk (the same clause),
// bounded by its own best pair: a document cannot hold a term twice, so it
// is in one of them, and the documents of the low parts, most of a list,
// take part only when the other clauses can lift them to the threshold.
const numTiers = 3

// tierCuts are the shares of a list's postings the first tiers end at.
var tierCuts = [numTiers - 1]float64{1.0 / 16, 1.0 / 4}

// piece is one tier of a term's postings in one segment (deleted
// documents too), in document order.
type piece struct {
	docs    []uint32
	codes   []uint16 // each posting's impact, an index in pairs
	pairs   []impact // shared by the tiers of a list
	present []uint16 // the codes of this tier
	// Per block of blockSize postings: its last document, largest
	// frequency and shortest length.
	last  []uint32
	bound []impact
}

// segPostings is a term's postings in one segment, by tier.
type segPostings struct {
	tiers [numTiers]*piece // nil when empty
	bytes int
	used  uint64 // the cache's clock when last looked up
}

// pieceKey names a term's postings in a segment.
type pieceKey struct {
	seg         segment.Segment
	field, term string
}

// pieceEntry is a term's postings in a segment or, for a short list,
// only its length.
type pieceEntry struct {
	p *segPostings
	n uint64 // postings, deleted ones too
}

// blockCache keeps the pieces of the index's long postings lists.
type blockCache struct {
	// minLen and maxBytes are the defaults when zero (tests set them).
	minLen   int
	maxBytes int
	// off turns the cache off (benchmarks compare with the path without).
	off bool

	mu     sync.Mutex
	pieces map[pieceKey]pieceEntry
	bytes  int
	shorts int // entries of short lists (lengths only)
	clock  uint64
	seen   *index.Snapshot // the snapshot whose segments were last pruned to
}

// blockStats says what the cache holds.
type blockStats struct {
	Pieces, Postings, Bytes int
}

func (bc *blockCache) stats() blockStats {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	var s blockStats
	for _, e := range bc.pieces {
		if e.p != nil {
			for _, t := range e.p.tiers {
				if t != nil {
					s.Pieces++
					s.Postings += len(t.docs)
				}
			}
		}
	}
	s.Bytes = bc.bytes
	return s
}

// blockSegment is one segment of a snapshot as the block cursors see it.
type blockSegment struct {
	seg     segment.Segment
	deleted *roaring.Bitmap // nil when none
	offset  uint64          // its first document number in the snapshot
}

// segmentsOf returns a snapshot's segments, or false when the snapshot is
// not bluge's own; it drops the pieces of segments no longer in it.
func (bc *blockCache) segmentsOf(snap blugesearch.Reader) ([]blockSegment, bool) {
	s, ok := snap.(*index.Snapshot)
	if !ok || bc.off {
		return nil, false
	}
	segs := s.Segments()
	out := make([]blockSegment, len(segs))
	running := uint64(0)
	for i, ss := range segs {
		w, ok := ss.(interface{ Segment() segment.Segment })
		if !ok {
			return nil, false
		}
		d := ss.Deleted()
		if d != nil && d.IsEmpty() {
			d = nil
		}
		out[i] = blockSegment{seg: w.Segment(), deleted: d, offset: running}
		running += w.Segment().Count() // as bluge numbers documents
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.seen != s && bc.pieces != nil {
		live := make(map[segment.Segment]bool, len(out))
		for _, b := range out {
			live[b.seg] = true
		}
		for k, e := range bc.pieces {
			if !live[k.seg] {
				if e.p != nil {
					bc.bytes -= e.p.bytes
				}
				bc.del(k)
			}
		}
	}
	bc.seen = s
	return out, true
}

// list returns the tiers of a term's postings in each segment ([tier][seg],
// nil for a segment without it), or false when the list is short (read it
// from bluge) or cannot be kept. rank orders the pairs of a list for its
// tiers (any order is right; the query's scorer's is the best).
func (bc *blockCache) list(segs []blockSegment, field, term string, rank func(impact) float64) (tiers [numTiers][]*piece, ok bool, err error) {
	out, err := bc.segPostings(segs, field, term, rank)
	if out == nil || err != nil {
		return tiers, false, err
	}
	for t := range tiers {
		tiers[t] = make([]*piece, len(segs))
		for i, sp := range out {
			if sp != nil {
				tiers[t][i] = sp.tiers[t]
			}
		}
	}
	return tiers, true, nil
}

// minLength is the least length of a list the cache keeps.
func (bc *blockCache) minLength() int {
	if bc.minLen == 0 {
		return blockMinLen
	}
	return bc.minLen
}

func (bc *blockCache) segPostings(segs []blockSegment, field, term string, rank func(impact) float64) ([]*segPostings, error) {
	minLen := bc.minLength()
	maxBytes := bc.maxBytes
	if maxBytes == 0 {
		maxBytes = blockMaxBytes
	}
	// Most lists were looked up before: a short one is told without
	// allocating.
	bc.mu.Lock()
	if bc.pieces != nil {
		total, known, long := uint64(0), true, false
		for _, s := range segs {
			e, ok := bc.pieces[pieceKey{s.seg, field, term}]
			if !ok {
				known = false
				break
			}
			total += e.n
			long = long || e.p != nil
		}
		if known && !long && total < uint64(minLen) {
			bc.mu.Unlock()
			return nil, nil
		}
	}
	bc.mu.Unlock()
	out := make([]*segPostings, len(segs))
	ns := make([]uint64, len(segs))
	known := make([]bool, len(segs))
	total := uint64(0)
	bc.mu.Lock()
	if bc.pieces == nil {
		bc.pieces = map[pieceKey]pieceEntry{}
	}
	bc.clock++
	for i, s := range segs {
		if e, ok := bc.pieces[pieceKey{s.seg, field, term}]; ok {
			out[i], ns[i], known[i] = e.p, e.n, true
			if e.p != nil {
				e.p.used = bc.clock
			}
			total += e.n
		}
	}
	bc.mu.Unlock()
	// The lengths of the lists not looked up yet.
	pls := make([]segment.PostingsList, len(segs))
	for i, s := range segs {
		if known[i] {
			continue
		}
		dict, err := s.seg.Dictionary(field)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: postings of %s:%s: %w", field, term, err)
		}
		pl, err := dict.PostingsList([]byte(term), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: postings of %s:%s: %w", field, term, err)
		}
		pls[i], ns[i] = pl, pl.Count()
		total += ns[i]
	}
	if total < uint64(minLen) {
		bc.mu.Lock()
		for i, s := range segs {
			if !known[i] {
				bc.put(pieceKey{s.seg, field, term}, pieceEntry{n: ns[i]})
			}
		}
		bc.evict(maxBytes)
		bc.mu.Unlock()
		return nil, nil
	}
	for i := range segs {
		if known[i] && (out[i] != nil || ns[i] == 0) {
			continue
		}
		if pls[i] == nil { // known short before, long now in all
			dict, err := segs[i].seg.Dictionary(field)
			if err != nil {
				return nil, fmt.Errorf("blugeindex: postings of %s:%s: %w", field, term, err)
			}
			if pls[i], err = dict.PostingsList([]byte(term), nil, nil); err != nil {
				return nil, fmt.Errorf("blugeindex: postings of %s:%s: %w", field, term, err)
			}
		}
		p, err := buildPiece(pls[i], rank)
		if err != nil {
			return nil, err
		}
		if p == nil || p.bytes > maxBytes/4 {
			return nil, nil // too varied or too large to keep: read bluge's
		}
		out[i] = p
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	for i, s := range segs {
		k := pieceKey{s.seg, field, term}
		old, ok := bc.pieces[k]
		if ok && (old.p != nil || ns[i] == 0) {
			out[i] = old.p // built meanwhile by another search
			continue
		}
		if out[i] == nil {
			bc.put(k, pieceEntry{n: ns[i]})
			continue
		}
		out[i].used = bc.clock
		bc.put(k, pieceEntry{p: out[i], n: ns[i]})
		bc.bytes += out[i].bytes
	}
	bc.evict(maxBytes)
	return out, nil
}

// maxShorts bounds how many lengths of short lists the cache keeps.
const maxShorts = 1 << 18

// put and del change an entry, counting those of short lists.
func (bc *blockCache) put(k pieceKey, e pieceEntry) {
	if old, ok := bc.pieces[k]; ok && old.p == nil {
		bc.shorts--
	}
	if e.p == nil {
		bc.shorts++
	}
	bc.pieces[k] = e
}

func (bc *blockCache) del(k pieceKey) {
	if old, ok := bc.pieces[k]; ok && old.p == nil {
		bc.shorts--
	}
	delete(bc.pieces, k)
}

// evict drops the least recently used pieces while the cache is over
// budget (the pieces handed out stay valid: they are never changed).
func (bc *blockCache) evict(maxBytes int) {
	if bc.shorts > maxShorts {
		// The lengths of short lists cost only a lookup to learn again.
		for k, e := range bc.pieces {
			if e.p == nil {
				delete(bc.pieces, k)
			}
		}
		bc.shorts = 0
	}
	for bc.bytes > maxBytes {
		var oldest pieceKey
		var o *segPostings
		for k, e := range bc.pieces {
			if e.p != nil && (o == nil || e.p.used < o.used) {
				oldest, o = k, e.p
			}
		}
		if o == nil {
			return
		}
		bc.bytes -= o.bytes
		bc.del(oldest) // the next search to need it builds it again
	}
}

// buildPiece decodes a segment's postings list (every document, deleted
// ones too) into its tiers; nil when it has more distinct (frequency,
// length) pairs than a code holds.
func buildPiece(pl segment.PostingsList, rank func(impact) float64) (*segPostings, error) {
	n := int(pl.Count())
	it, err := pl.Iterator(true, true, false, nil)
	if err != nil {
		return nil, fmt.Errorf("blugeindex: read postings: %w", err)
	}
	docs, codes := make([]uint32, 0, n), make([]uint16, 0, n)
	var pairs []impact
	var counts []int
	index := map[impact]uint16{}
	for {
		pst, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("blugeindex: read postings: %w", err)
		}
		if pst == nil {
			break
		}
		im := impact{freq: uint32(pst.Frequency()), dl: math.Float32bits(float32(pst.Norm()))}
		code, ok := index[im]
		if !ok {
			if len(pairs) > math.MaxUint16 {
				return nil, nil
			}
			code = uint16(len(pairs))
			index[im] = code
			pairs = append(pairs, im)
			counts = append(counts, 0)
		}
		docs = append(docs, uint32(pst.Number()))
		codes = append(codes, code)
		counts[code]++
	}
	// The tiers: the pairs by rank, cut at the tiers' shares of the list.
	order := make([]uint16, len(pairs))
	for c := range order {
		order[c] = uint16(c)
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(pairs[order[a]]) > rank(pairs[order[b]]) })
	tierOf := make([]uint8, len(pairs))
	sizes := [numTiers]int{}
	cum, t := 0, 0
	for _, c := range order {
		tierOf[c] = uint8(t)
		sizes[t] += counts[c]
		cum += counts[c]
		for t < numTiers-1 && float64(cum) >= tierCuts[t]*float64(len(docs)) {
			t++
		}
	}
	sp := &segPostings{bytes: 8*len(pairs) + 3*len(pairs) + 64}
	for t := range sp.tiers {
		if sizes[t] == 0 {
			continue
		}
		p := &piece{docs: make([]uint32, 0, sizes[t]), codes: make([]uint16, 0, sizes[t]), pairs: pairs}
		for c := range pairs {
			if tierOf[c] == uint8(t) && counts[c] > 0 {
				p.present = append(p.present, uint16(c))
			}
		}
		sp.tiers[t] = p
	}
	for k, d := range docs {
		p := sp.tiers[tierOf[codes[k]]]
		p.docs = append(p.docs, d)
		p.codes = append(p.codes, codes[k])
	}
	for _, p := range sp.tiers {
		if p == nil {
			continue
		}
		for from := 0; from < len(p.docs); from += blockSize {
			to := min(from+blockSize, len(p.docs))
			b := impact{dl: math.MaxUint32}
			for _, c := range p.codes[from:to] {
				im := pairs[c]
				b.freq, b.dl = max(b.freq, im.freq), min(b.dl, im.dl)
			}
			p.last = append(p.last, p.docs[to-1])
			p.bound = append(p.bound, b)
		}
		sp.bytes += 6*len(p.docs) + 12*len(p.last) + 2*len(p.present) + 96
	}
	return sp, nil
}

// pairScore is the scorer's score of a posting with im's frequency and
// length, as a cursor on bluge's postings computes it.
func pairScore(s blugesearch.Scorer, im impact) float64 {
	return s.Score(int(im.freq), float64(math.Float32frombits(im.dl)))
}

// boundSlack lifts a bound computed by the scorer above any score of the
// pairs it bounds, whatever the rounding of the two computations.
const boundSlack = 1 + 1e-9

// scoreBound is the most a posting with at most freq and at least dl
// scores.
func scoreBound(s blugesearch.Scorer, im impact) float64 {
	return pairScore(s, im) * boundSlack
}

// blockList reads a term's pieces across the snapshot's segments, in
// snapshot document numbers, for a cursor.
type blockList struct {
	segs   []blockSegment
	pieces []*piece
	scorer blugesearch.Scorer
	// scores are the scorer's scores of each segment's pairs
	// (scoreTables), nil for a segment whose list has too many.
	scores [][]float64
	si, i  int // current segment and posting in its piece
	// The shallow position for bounds: a segment and a block at or after
	// the cursor's.
	bs, bb int
	// memo is the last block bound asked for, memoBound its score.
	memo      impact
	memoBound float64
}

func newBlockList(segs []blockSegment, pieces []*piece, scorer blugesearch.Scorer, scores [][]float64) *blockList {
	l := &blockList{segs: segs, pieces: pieces, scorer: scorer, scores: scores, si: 0, i: -1}
	l.memo = impact{dl: math.MaxUint32}
	l.memoBound = scoreBound(scorer, l.memo)
	return l
}

// ub bounds every score of the list: the best of its pairs.
func (l *blockList) ub() float64 {
	best := 0.0
	for si, p := range l.pieces {
		if p == nil {
			continue
		}
		for _, c := range p.present {
			best = max(best, l.scoreOf(si, c)*boundSlack) // as scoreBound
		}
	}
	return best
}

// scoreOf is the score of the pair code of segment si's piece: from the
// segment's table when it has one.
func (l *blockList) scoreOf(si int, code uint16) float64 {
	if tbl := l.scores[si]; tbl != nil {
		return tbl[code]
	}
	return pairScore(l.scorer, l.pieces[si].pairs[code])
}

// postings returns how many postings the list's pieces hold, deleted
// documents' too.
func (l *blockList) postings() uint64 {
	n := 0
	for _, p := range l.pieces {
		if p != nil {
			n += len(p.docs)
		}
	}
	return uint64(n)
}

// addTo adds the scores of the list's live postings of the documents from
// from to to into score (by document, from from on) and marks them in
// held: accumulation (accumulate.go) reads the arrays straight, not a
// posting at a time through a cursor.
func (l *blockList) addTo(score []float64, held []uint64, from, to uint64) {
	for si, p := range l.pieces {
		if p == nil || len(p.docs) == 0 {
			continue
		}
		off := l.segs[si].offset
		k := 0
		if from > off {
			if from-off > math.MaxUint32 {
				continue
			}
			k = seek(p.docs, 0, uint32(from-off))
		}
		// The table's lookup stays in this loop, not behind scoreOf: this
		// is the hottest loop of a deep list, and scoreOf is not inlined.
		tbl, deleted := l.scores[si], l.segs[si].deleted
		for ; k < len(p.docs); k++ {
			doc := off + uint64(p.docs[k])
			if doc >= to {
				break
			}
			if deleted != nil && deleted.Contains(p.docs[k]) {
				continue
			}
			var s float64
			if tbl != nil {
				s = tbl[p.codes[k]]
			} else {
				s = pairScore(l.scorer, p.pairs[p.codes[k]])
			}
			i := doc - from
			score[i] += s
			held[i>>6] |= 1 << (i & 63)
		}
	}
}

// maxScoreTable is the most pairs a segment's list may have for
// scoreTables to tabulate them (most have tens to hundreds).
const maxScoreTable = 4096

// scoreTables returns, per segment, the scorer's score of each (frequency,
// length) pair of a list's pieces (shared by its tiers), nil for a segment
// without the list or with more than maxScoreTable pairs: a walk scores a
// posting by one load instead of the scorer's two divisions, with the same
// result, since the scorer computed it.
func scoreTables(tiers [numTiers][]*piece, scorer blugesearch.Scorer) [][]float64 {
	segs := len(tiers[0])
	pairsOf := make([][]impact, segs)
	total := 0
	for si := range segs {
		for t := range tiers {
			if p := tiers[t][si]; p != nil {
				if len(p.pairs) <= maxScoreTable {
					pairsOf[si] = p.pairs
					total += len(p.pairs)
				}
				break
			}
		}
	}
	all := make([]float64, total)
	out := make([][]float64, segs)
	for si, pairs := range pairsOf {
		if pairs == nil {
			continue
		}
		tbl := all[:len(pairs):len(pairs)]
		all = all[len(pairs):]
		for c, im := range pairs {
			tbl[c] = pairScore(scorer, im)
		}
		out[si] = tbl
	}
	return out
}

// settle moves from the current position to the first live posting at or
// after it; it returns false past the end.
func (l *blockList) settle() bool {
	for l.si < len(l.pieces) {
		p := l.pieces[l.si]
		if p == nil || l.i >= len(p.docs) {
			l.si++
			l.i = 0
			continue
		}
		if d := l.segs[l.si].deleted; d != nil {
			for l.i < len(p.docs) && d.Contains(p.docs[l.i]) {
				l.i++
			}
			if l.i >= len(p.docs) {
				continue
			}
		}
		return true
	}
	return false
}

// next moves to the next live posting.
func (l *blockList) next(c *cursor) {
	l.i++
	l.set(c)
}

// advance moves to the first live posting at or after doc.
func (l *blockList) advance(c *cursor, doc uint64) {
	for l.si < len(l.pieces) && l.si+1 < len(l.segs) && l.segs[l.si+1].offset <= doc {
		l.si++
		l.i = 0
	}
	if l.si < len(l.pieces) {
		if p := l.pieces[l.si]; p != nil && doc > l.segs[l.si].offset {
			local := doc - l.segs[l.si].offset
			if local > math.MaxUint32 {
				l.i = len(p.docs)
			} else {
				l.i = seek(p.docs, max(l.i, 0), uint32(local))
			}
		}
	}
	l.set(c)
}

func (l *blockList) set(c *cursor) {
	if l.i < 0 {
		l.i = 0
	}
	if !l.settle() {
		c.doc = noDoc
		return
	}
	p := l.pieces[l.si]
	code := p.codes[l.i]
	c.doc = l.segs[l.si].offset + uint64(p.docs[l.i])
	if tbl := l.scores[l.si]; tbl != nil {
		c.known = tbl[code]
		return
	}
	im := p.pairs[code]
	c.freq, c.norm, c.known = int(im.freq), float64(math.Float32frombits(im.dl)), -1
}

// seek returns the first index at or after from where the sorted a holds
// x or more (len(a) when none). It gallops from from before it halves:
// a walk's cursors mostly move a few postings or blocks at a time.
func seek(a []uint32, from int, x uint32) int {
	if from >= len(a) || a[from] >= x {
		return from
	}
	lo, step := from, 1 // a[lo] < x
	for lo+step < len(a) && a[lo+step] < x {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(a)) // a[hi] >= x, or the end
	i, _ := slices.BinarySearch(a[lo+1:hi], x)
	return lo + 1 + i
}

// blockAt returns a bound of the list's scores of the documents from doc
// (at or after the cursor's) to end, the last document of the block doc
// falls in (noDoc past the list's end).
func (l *blockList) blockAt(doc uint64) (float64, uint64) {
	if l.bs < l.si || (l.bs == l.si && l.bb < l.i/blockSize) {
		l.bs, l.bb = l.si, max(l.i, 0)/blockSize
	}
	for l.bs < len(l.pieces) {
		p := l.pieces[l.bs]
		off := l.segs[l.bs].offset
		if p != nil {
			// The first block whose last document is at or after doc.
			if doc > off {
				local := doc - off
				if l.bb < len(p.last) && uint64(p.last[l.bb]) < local {
					l.bb = seek(p.last, l.bb, uint32(min(local, math.MaxUint32)))
				}
			}
			if l.bb < len(p.last) {
				// Consecutive pivots mostly fall in the same block.
				if b := p.bound[l.bb]; b != l.memo {
					l.memo, l.memoBound = b, scoreBound(l.scorer, b)
				}
				return l.memoBound, off + uint64(p.last[l.bb])
			}
		}
		l.bs++
		l.bb = 0
	}
	return 0, noDoc
}
