package blugeindex

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/climatesearch/climatesearch/core"
)

// Count returns how many live documents match the query: the size of the
// whole match set Search ranks (the same analysis and clauses), without
// reading or ordering any of them. core/search uses it for the total of an
// answer that needs no more than a page.
func (x *Index) Count(ctx context.Context, q core.TextQuery) (int, error) {
	text := core.CleanText(q.Text)
	if text == "" {
		return 0, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.writer == nil {
		return 0, ErrClosed
	}
	reader := x.reader // the last commit's (see Commit)
	lex := x.lex
	return countMatches(ctx, reader, planQuery(analyzeQuery(text, lex), lex, text, q.Lang, q.Catalogs))
}

// countMatches counts the documents of a plan as the union of its clauses'
// postings, segment by segment: bluge keeps each segment's postings of a
// term as a bitmap of live documents, so a count costs a few bitmap unions,
// not a visit of every match (a common word matches a tenth of a large
// catalog). countByVisit is the same count through bluge's search.
func countMatches(ctx context.Context, reader *bluge.Reader, p *plan) (int, error) {
	if len(p.clauses) == 0 {
		return 0, nil
	}
	snap, err := snapshotOf(ctx, reader)
	if err != nil {
		return 0, err
	}
	s, ok := snap.(*index.Snapshot)
	if !ok {
		return countByVisit(ctx, reader, p)
	}
	n := 0
	for _, ss := range s.Segments() {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		seg, ok := ss.(interface{ Segment() segment.Segment })
		if !ok {
			return countByVisit(ctx, reader, p)
		}
		docs, err := segmentDocs(seg.Segment(), ss.Deleted(), p.clauses)
		if err != nil {
			return 0, err
		}
		if p.catalogs != nil {
			var cats []clause
			for _, c := range p.catalogs {
				cats = append(cats, clause{field: fieldCatalog, term: string(c)})
			}
			in, err := segmentDocs(seg.Segment(), ss.Deleted(), cats)
			if err != nil {
				return 0, err
			}
			docs.And(in)
		}
		n += int(docs.GetCardinality())
	}
	return n, nil
}

// segmentDocs returns the live documents of one segment holding any of the
// clauses' terms, as a new bitmap.
func segmentDocs(seg segment.Segment, deleted *roaring.Bitmap, clauses []clause) (*roaring.Bitmap, error) {
	docs := roaring.New()
	for _, c := range clauses {
		dict, err := seg.Dictionary(c.field)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: count: %w", err)
		}
		pl, err := dict.PostingsList([]byte(c.term), deleted, nil)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: count: %w", err)
		}
		it, err := pl.Iterator(false, false, false, nil)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: count: %w", err)
		}
		if o, ok := it.(segment.OptimizablePostingsIterator); ok {
			if d, ok := o.DocNum1Hit(); ok {
				docs.Add(uint32(d))
			} else if bm := o.ActualBitmap(); bm != nil {
				docs.Or(bm) // bm may be the segment's own: never changed here
			}
			continue
		}
		for {
			pst, err := it.Next()
			if err != nil {
				return nil, fmt.Errorf("blugeindex: count: %w", err)
			}
			if pst == nil {
				break
			}
			docs.Add(uint32(pst.Number()))
		}
	}
	return docs, nil
}

// countByVisit counts the matches of a plan through bluge's search, which
// visits each of them: the reference of countMatches (topk_test.go), and
// its way when the snapshot is not bluge's own.
func countByVisit(ctx context.Context, reader *bluge.Reader, p *plan) (int, error) {
	it, err := reader.Search(ctx, bluge.NewAllMatches(buildQuery(p)))
	if err != nil {
		return 0, fmt.Errorf("blugeindex: count: %w", err)
	}
	n := 0
	for {
		m, err := it.Next()
		if err != nil {
			return 0, fmt.Errorf("blugeindex: count: %w", err)
		}
		if m == nil {
			return n, nil
		}
		n++
	}
}
