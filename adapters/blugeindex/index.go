// Package blugeindex implements ports.TextIndex with an in-memory bluge
// index. The store is the source of truth: at boot the caller rebuilds the
// index by upserting every live resource, so nothing is persisted here.
package blugeindex

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.TextIndex = (*Index)(nil)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("blugeindex: index is closed")

// Index is an in-memory full-text index of resources, safe for concurrent use.
//
// A write is prepared, then committed. Preparing (the analysis of the new
// resources, and of the resources whose words a new dictionary splits
// differently) runs beside searches; the commit, which introduces the bluge
// batch and updates the lexicon, holds the index exclusively, so a search
// always pairs a bluge snapshot with the lexicon of the same write and sees
// a write all or nothing. Every Search takes a fresh snapshot from the
// writer: in bluge that is a read-locked pointer copy plus a reference
// count, far cheaper than the search itself.
type Index struct {
	// mu guards the writer and the lexicon: searches hold it shared,
	// commits and Close exclusively.
	mu     sync.RWMutex
	writer *bluge.Writer // nil once closed
	lex    *lexicon

	// writeMu serialises changes from Prepare to Commit or Discard, so
	// each is prepared against the lexicon it will be applied to and
	// changes apply in call order (last writer wins).
	writeMu sync.Mutex
}

// New opens an empty in-memory index.
func New() (*Index, error) {
	x := &Index{lex: newLexicon()}
	cfg := bluge.InMemoryOnlyConfig()
	// Fill the config's own map: the config's norm function holds it.
	maps.Copy(cfg.PerFieldSimilarity, similarities(func() *lexicon { return x.lex }))
	w, err := bluge.OpenWriter(cfg)
	if err != nil {
		return nil, fmt.Errorf("blugeindex: open: %w", err)
	}
	x.writer = w
	return x, nil
}

// Close releases the index. It is safe to call more than once.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writer == nil {
		return nil
	}
	err := x.writer.Close()
	x.writer = nil
	return err
}

// Upsert adds or replaces resources in one atomic change. A withdrawn
// resource is removed instead, so the index holds live resources only
// whatever the caller passes. Each change costs a segment build and a
// background merge besides its analysis, so callers should pass resources
// in bulk.
func (x *Index) Upsert(ctx context.Context, rs []core.Resource) error {
	return x.apply(ctx, rs, nil)
}

// Remove drops resources; unknown keys are ignored.
func (x *Index) Remove(ctx context.Context, keys []core.Key) error {
	return x.apply(ctx, nil, keys)
}

func (x *Index) apply(ctx context.Context, upsert []core.Resource, remove []core.Key) error {
	ch, err := x.Prepare(ctx, upsert, remove)
	if err != nil {
		return err
	}
	return ch.Commit()
}

// Prepare analyses a change without making it visible; see ports.TextIndex.
// The next Prepare waits until the change is committed or discarded.
func (x *Index) Prepare(ctx context.Context, upsert []core.Resource, remove []core.Key) (ports.IndexChange, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	target := make(map[core.Key]*core.Resource, len(upsert)+len(remove))
	for i := range upsert {
		k := upsert[i].Key()
		if k.ID == "" || k.Catalog == "" {
			return nil, core.Invalidf("blugeindex: resource without id or catalog (%q)", k.String())
		}
		if upsert[i].Withdrawn {
			target[k] = nil
		} else {
			r := upsert[i].Clone()
			target[k] = &r // the last entry of a key wins
		}
	}
	for _, k := range remove {
		target[k] = nil
	}
	x.writeMu.Lock()
	if x.closed() {
		x.writeMu.Unlock()
		return nil, ErrClosed
	}
	// Only writers change the lexicon, and they hold writeMu: reading it
	// here needs no other lock.
	dl := x.lex.prepare(target)
	batch := bluge.NewBatch()
	for k, d := range dl.next {
		id := bluge.Identifier(k.String())
		switch _, touched := target[k]; {
		case d == nil:
			batch.Delete(id)
		case touched || x.lex.docs[k].hash != d.hash:
			batch.Update(id, document(k, d))
		}
	}
	return &change{x: x, dl: dl, batch: batch}, nil
}

func (x *Index) closed() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.writer == nil
}

// change is a prepared write; see ports.IndexChange.
type change struct {
	x     *Index
	dl    *delta
	batch *index.Batch
	done  bool
}

// Commit introduces the batch and updates the lexicon, with searches held
// back meanwhile.
func (c *change) Commit() error {
	if c.done {
		return errors.New("blugeindex: change already committed or discarded")
	}
	c.done = true
	x := c.x
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writer == nil {
		return ErrClosed
	}
	if err := x.writer.Batch(c.batch); err != nil {
		return fmt.Errorf("blugeindex: write batch: %w", err)
	}
	x.lex.apply(c.dl)
	return nil
}

// Discard drops the change.
func (c *change) Discard() {
	if !c.done {
		c.done = true
		c.x.writeMu.Unlock()
	}
}

// document maps an analysed resource to its bluge document. The document id
// is the prefixed key, which bluge stores, so a search can return keys.
func document(key core.Key, d *docAnalysis) *bluge.Document {
	doc := bluge.NewDocument(key.String())
	doc.AddField(bluge.NewKeywordField(fieldCatalog, string(key.Catalog)))
	for _, t := range idTerms(key) {
		doc.AddField(bluge.NewKeywordField(fieldID, t))
	}
	for i, f := range textFields {
		if len(d.fields[i]) == 0 {
			// No empty fields: BM25 averages field length over the
			// documents that have the field.
			continue
		}
		doc.AddField(bluge.NewTextField(f.name, "").WithAnalyzer(fixedTokens(d.fields[i])))
	}
	return doc
}
