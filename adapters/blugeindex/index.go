// Package blugeindex implements ports.TextIndex with bluge: in memory (New,
// for tests and tools) or on disk (Open, the service). The store is the
// source of truth; an index on disk is kept across a clean stop together
// with its lexicon (Persist) and taken up again at the next start only when
// the store vouches that nothing changed meanwhile (Resume). Otherwise the
// caller rebuilds it by upserting every live resource.
package blugeindex

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/parallel"
	"github.com/climatesearch/climatesearch/internal/atomicfile"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.TextIndex = (*Index)(nil)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("blugeindex: index is closed")

// Index is a full-text index of resources, safe for concurrent use.
//
// A write is prepared, then committed. Preparing (the analysis of the new
// resources, and of the resources whose words a new dictionary splits
// differently) and writing the bluge batch run beside searches, which read
// the reader of the last commit; the commit then swaps the reader and
// updates the lexicon holding the index exclusively, so a search always
// pairs a bluge snapshot with the lexicon of the same write and sees a
// write all or nothing.
type Index struct {
	// mu guards the reader and the lexicon: searches hold it shared,
	// commits and Close exclusively.
	mu     sync.RWMutex
	writer *bluge.Writer // nil once closed
	// reader is the snapshot of the last commit: what searches read, and
	// where a change reads the resources it replaces.
	reader *bluge.Reader
	lex    *lexicon

	// writeMu serialises changes from Prepare to Commit or Discard, so
	// each is prepared against the lexicon it will be applied to and
	// changes apply in call order (last writer wins).
	writeMu sync.Mutex

	// dir holds an index on disk (empty: in memory).
	dir string
	// taken is the lexicon snapshot found by Open, set aside for Resume
	// (empty: none).
	taken string
	// empty says bluge held nothing when opened (no snapshot, or memory).
	empty bool
	// failed is set by a change that failed half-way and could not be
	// undone: such an index is never persisted (the next start rebuilds
	// it).
	failed error

	// ids keeps the segments' stored ids by document number (RankedPrefix).
	ids keyCache
	// blocks keeps the long postings lists with block bounds (blocks.go).
	blocks blockCache
	// split is the size from which a ranking walks two halves side by
	// side (0: splitWalkFrom; tests lower it).
	split uint64
	// maps holds the mapped segment files of an index on disk (mapped.go).
	maps segmentMaps
}

// splitFrom is the size from which a ranking walks two halves.
func (x *Index) splitFrom() uint64 {
	if x.split == 0 {
		return splitWalkFrom
	}
	return x.split
}

// New opens an empty in-memory index.
func New() (*Index, error) {
	x := &Index{lex: newLexicon(), empty: true}
	if err := x.openWriter(); err != nil {
		return nil, err
	}
	return x, nil
}

// Files under an index directory.
const (
	blugeDir     = "bluge"
	snapshotFile = "lexicon.snap"
	// takenFile is the snapshot once Open has set it aside for Resume.
	takenFile = "lexicon.snap.taken"
)

// Open opens the index kept in dir (created when missing) without reading
// it: that is Resume's work, which the caller must call once, first. The
// snapshot is set aside at once: after this start the index on disk moves
// on, and a crash must not find a snapshot that seems to match it. Without
// a snapshot the directory is emptied, since bluge's segments are of no use
// without their lexicon.
func Open(dir string) (*Index, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("blugeindex: %w", err)
	}
	x := &Index{lex: newLexicon(), dir: dir}
	taken := filepath.Join(dir, takenFile)
	_ = os.Remove(taken) // left by a start that never resumed
	switch err := os.Rename(filepath.Join(dir, snapshotFile), taken); {
	case err == nil:
		x.taken = taken
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("blugeindex: %w", err)
	default:
		if err := os.RemoveAll(filepath.Join(dir, blugeDir)); err != nil {
			return nil, fmt.Errorf("blugeindex: clearing %s: %w", dir, err)
		}
		x.empty = true
	}
	if err := x.openWriter(); err != nil {
		return nil, err
	}
	return x, nil
}

// loadSnapshot reads the snapshot at path if it was written under mark.
func loadSnapshot(path, mark string) (*lexicon, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if got, err := snapshotMark(b); err != nil || got != mark {
		return nil, fmt.Errorf("%w: another mark", errSnapshot)
	}
	lex, _, err := readSnapshot(b)
	return lex, err
}

// openWriter opens bluge (in memory, or in dir) with the index's
// similarities and takes its first reader.
func (x *Index) openWriter() error {
	cfg := bluge.InMemoryOnlyConfig()
	if x.dir != "" {
		cfg = bluge.DefaultConfigWithDirectory(x.maps.directory(filepath.Join(x.dir, blugeDir)))
	}
	// Fill the config's own map: the config's norm function holds it.
	maps.Copy(cfg.PerFieldSimilarity, similarities(func() *lexicon { return x.lex }))
	w, err := bluge.OpenWriter(cfg)
	if err != nil {
		return fmt.Errorf("blugeindex: open: %w", err)
	}
	r, err := w.Reader()
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("blugeindex: open reader: %w", err)
	}
	x.writer, x.reader = w, r
	return nil
}

// Resume tells whether the index opened from disk is the one persisted
// under mark, the mark the store kept from the same clean stop. If it is
// not (a crash, a store changed or restored meanwhile, an index in memory),
// the index is emptied for a rebuild and Resume returns false.
func (x *Index) Resume(_ context.Context, mark string) (bool, error) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writer == nil {
		return false, ErrClosed
	}
	if x.taken != "" {
		var err error
		var lex *lexicon
		if mark != "" {
			lex, err = loadSnapshot(x.taken, mark)
		}
		_ = os.Remove(x.taken)
		x.taken = ""
		if mark != "" && err == nil {
			x.lex = lex
			return true, nil
		}
	}
	if x.empty && len(x.lex.docs) == 0 {
		return false, nil // nothing to clear
	}
	_ = x.reader.Close()
	err := x.writer.Close()
	x.writer, x.reader, x.lex = nil, nil, newLexicon()
	if err != nil {
		return false, fmt.Errorf("blugeindex: close: %w", err)
	}
	if x.dir != "" {
		if err := os.RemoveAll(filepath.Join(x.dir, blugeDir)); err != nil {
			return false, fmt.Errorf("blugeindex: clearing %s: %w", x.dir, err)
		}
	}
	return false, x.openWriter()
}

// Persist closes the index and, for an index on disk, writes its lexicon
// beside bluge's segments under a new random mark, which it returns for
// the store to keep (see Resume). An index in memory returns no mark. The
// index answers ErrClosed afterwards.
func (x *Index) Persist(_ context.Context) (string, error) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writer == nil {
		return "", ErrClosed
	}
	_ = x.reader.Close()
	// Every commit waited until its segment was on disk, so closing
	// loses nothing.
	err := x.writer.Close()
	x.writer, x.reader = nil, nil
	switch {
	case err != nil:
		return "", fmt.Errorf("blugeindex: close: %w", err)
	case x.failed != nil:
		return "", fmt.Errorf("blugeindex: not persisted after a failed commit: %w", x.failed)
	case x.dir == "":
		return "", nil
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	if err := atomicfile.Write(filepath.Join(x.dir, snapshotFile), func(f *os.File) error {
		return writeSnapshot(f, mark, x.lex)
	}); err != nil {
		return "", fmt.Errorf("blugeindex: writing the lexicon: %w", err)
	}
	return mark, nil
}

// Close releases the index without persisting it, after the change in
// progress, if any. It is safe to call more than once, and after Persist.
func (x *Index) Close() error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writer == nil {
		return nil
	}
	_ = x.reader.Close()
	err := x.writer.Close()
	x.writer, x.reader = nil, nil
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
	target, err := targetOf(upsert, remove)
	if err != nil {
		return nil, err
	}
	x.writeMu.Lock()
	if x.closed() {
		x.writeMu.Unlock()
		return nil, ErrClosed
	}
	// Only writers change the lexicon and the reader, and they hold
	// writeMu: reading them here needs no other lock.
	c := &change{x: x}
	if err := c.prepare(x.lex, target, x.sources); err != nil {
		x.writeMu.Unlock()
		return nil, err
	}
	return c, nil
}

// targetOf maps each key a change touches to its new resource (nil:
// removed or withdrawn); the last entry of a key wins.
//
// Its keys are the ones the index keeps (the lexicon's documents, a
// change's written keys): their ids are their own copies, not slices of
// the caller's texts (a file's ids may be slices of its rows), packed in
// one string (core.Pack).
func targetOf(upsert []core.Resource, remove []core.Key) (map[core.Key]*core.Resource, error) {
	keys := make([]core.Key, 0, len(upsert)+len(remove))
	for i := range upsert {
		k := upsert[i].Key()
		if k.ID == "" || k.Catalog == "" {
			return nil, core.Invalidf("blugeindex: resource without id or catalog (%q)", k.String())
		}
		keys = append(keys, k)
	}
	keys = append(keys, remove...)
	core.Pack(keys, func(k *core.Key) *string { return &k.ID })
	target := make(map[core.Key]*core.Resource, len(keys))
	for i := range upsert {
		if upsert[i].Withdrawn {
			target[keys[i]] = nil
		} else {
			r := upsert[i].Clone()
			r.ID = keys[i].ID
			target[keys[i]] = &r
		}
	}
	for _, k := range keys[len(upsert):] {
		target[k] = nil
	}
	return target, nil
}

// prepare analyses a part of the change against lex, the lexicon it will
// be applied to, and makes its bluge batches; sources reads the indexed
// versions of the resources it replaces.
func (c *change) prepare(lex *lexicon, target map[core.Key]*core.Resource, sources func([]core.Key) (map[core.Key]*core.Resource, error)) error {
	dl, err := lex.prepare(target, sources)
	if err != nil {
		return err
	}
	var put []core.Key
	var gone []bluge.Identifier
	for k, d := range dl.next {
		switch _, touched := target[k]; {
		case d == nil:
			gone = append(gone, bluge.Identifier(k.String()))
		case touched || lex.docs[k].hash != d.hash:
			put = append(put, k)
		default:
			continue
		}
		// The key's id is its own copy (targetOf, or the lexicon's): an
		// extended change keeps the keys of every part.
		c.written = append(c.written, k)
	}
	// The documents are made on every core: this runs while the change
	// holds the index's write lock and the vectors wait, so one core
	// would otherwise idle (56 ms of a batch of 10,000).
	docs := make([]*bluge.Document, len(put))
	parallel.Each(len(put), func(i int) { docs[i] = document(put[i], dl.next[put[i]]) })
	lex.stage(dl) // the documents hold their terms: the analyses are compacted
	c.dl, c.batches = dl, segmentBatches(docs, gone, runtime.GOMAXPROCS(0))
	return nil
}

// minSegmentDocs is the fewest documents worth a segment of their own in a
// large change: below it one segment is built on one core, as bluge does.
const minSegmentDocs = 2000

// segmentBatches splits a change into bluge batches, one per core when it
// has minSegmentDocs documents per core or more: bluge builds each batch's
// segment on the goroutine that writes it, on one core, and that build is
// the largest part of a bulk write that runs after the store write (the
// analysis before it already uses every core). The deletions ride with
// the first batch. Smaller changes are one batch, so a few resources still
// make one small segment.
func segmentBatches(docs []*bluge.Document, gone []bluge.Identifier, cores int) []*index.Batch {
	n := max(1, min(cores, len(docs)/minSegmentDocs))
	batches := make([]*index.Batch, n)
	for i := range batches {
		batches[i] = bluge.NewBatch()
	}
	for _, id := range gone {
		batches[0].Delete(id)
	}
	for i, doc := range docs {
		b := batches[i*n/len(docs)]
		b.Update(doc.ID(), doc)
	}
	return batches
}

func (x *Index) closed() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.writer == nil
}

// change is a prepared write; see ports.IndexChange.
type change struct {
	x       *Index
	dl      *delta         // the part prepared, until applied (nil)
	batches []*index.Batch // its bluge batches; see segmentBatches
	// written are the keys whose documents the batches of every part
	// write or delete: what a change discarded after its build puts back
	// (undo).
	written []core.Key
	// built is set by build; reader then sees the change, x.reader not yet.
	built  bool
	reader *bluge.Reader
	done   bool
	// lex is the lexicon of a change extended by further parts (Extend):
	// a copy of the index's that takes each part once it is built, and
	// replaces the index's at the commit. nil: the change is one part,
	// applied to the index's lexicon at the commit.
	lex *lexicon
	// broken is why a Build or Extend failed: what was built is undone,
	// and Commit publishes nothing.
	broken error
}

// Extend builds the change so far, then prepares and builds one more part
// of it against the index as the parts before leave it, still beside
// searches, which see no part before Commit. The lexicon is copied at the
// first Extend (42 ms and 139 MB at a million resources,
// BenchmarkLexiconClone), so the parts go on changing the copy while
// searches read the index's own: a change too large to hold at once (a
// file of 100,000 rows) is analysed and written a part at a time without
// holding searches back. A failed Extend is undone as a failed Build is;
// the caller then discards the change.
func (c *change) Extend(ctx context.Context, upsert []core.Resource, remove []core.Key) error {
	switch {
	case c.done:
		return errors.New("blugeindex: change already committed or discarded")
	case c.broken != nil:
		return c.broken
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	target, err := targetOf(upsert, remove)
	if err != nil {
		return err
	}
	if !c.built {
		if err := c.build(); err != nil {
			return err
		}
	}
	if c.lex == nil {
		c.lex = c.x.lex.clone()
		c.lex.apply(c.dl)
		c.dl = nil
	}
	// The resources it replaces may be of an earlier part: read from the
	// reader that sees them.
	sources := func(keys []core.Key) (map[core.Key]*core.Resource, error) { return sourcesIn(c.reader, keys) }
	if err := c.prepare(c.lex, target, sources); err != nil {
		c.fail(err)
		return err
	}
	c.built = false
	if err := c.build(); err != nil {
		return err
	}
	// Into the copy at once: the part's full analyses (its terms, its
	// JSON) are let go before the caller reads the next part.
	c.lex.apply(c.dl)
	c.dl = nil
	return nil
}

// Build writes the change's segments beside searches, which go on reading
// the last commit's reader: the segment build, the costly part of a
// commit, then runs before the caller's publication instead of inside it.
// A failed build is undone; the caller then discards the change.
func (c *change) Build() error {
	if c.done || c.built || c.broken != nil {
		return errors.New("blugeindex: change already built, failed, committed or discarded")
	}
	return c.build()
}

// build writes the batches and takes the reader that sees them. If that
// fails, what bluge took is undone; an index that cannot be put back is
// marked failed (x.failed).
func (c *change) build() error {
	x := c.x
	// Only Close, Persist and Resume set the writer, and they wait for
	// writeMu, which this change holds.
	w := x.writer
	if w == nil {
		return ErrClosed
	}
	c.built = true
	err := writeBatches(w, c.batches)
	c.batches = nil // bluge has copied what it keeps
	if err == nil {
		var r *bluge.Reader
		if r, err = w.Reader(); err == nil {
			if c.reader != nil {
				_ = c.reader.Close() // an earlier part's (Extend)
			}
			c.reader = r
			return nil
		}
	}
	err = fmt.Errorf("blugeindex: write batch: %w", err)
	c.fail(err)
	return err
}

// fail undoes what the change has built after err; if that fails too, the
// index is marked failed (x.failed). Commit then publishes nothing.
func (c *change) fail(err error) {
	x := c.x
	if c.built {
		if uerr := c.undo(); uerr != nil {
			x.mu.Lock()
			x.failed = errors.Join(err, uerr) // bluge holds part of the change
			x.mu.Unlock()
		}
	}
	c.built = false // nothing left to undo or publish
	c.broken = err
}

// undo puts back, in the writer, the documents a built change wrote or
// deleted, as the last commit's reader holds them, so the next commit
// does not publish any of it. The lexicon never took the change, so the
// documents are analysed as they were indexed.
func (c *change) undo() error {
	x := c.x
	if c.reader != nil {
		_ = c.reader.Close()
		c.reader = nil
	}
	var indexed []core.Key
	for _, k := range c.written {
		if x.lex.docs[k] != nil {
			indexed = append(indexed, k)
		}
	}
	// From x.reader, which lacks the change; a key it lacks is deleted.
	olds, err := x.sources(indexed)
	if err != nil {
		return err
	}
	dl, err := x.lex.prepare(olds, x.sources)
	if err != nil {
		return err
	}
	b := bluge.NewBatch()
	done := make(map[core.Key]bool, len(c.written))
	for _, k := range c.written {
		if done[k] {
			continue // written by two parts: twice in one batch is two documents
		}
		done[k] = true
		if d := dl.next[k]; d != nil {
			b.Update(bluge.Identifier(k.String()), document(k, d))
		} else {
			b.Delete(bluge.Identifier(k.String()))
		}
	}
	return x.writer.Batch(b)
}

// Commit builds the change unless Build did, then swaps the reader and
// updates the lexicon with searches held back for that moment only, so no
// search pairs one with the other's old state.
func (c *change) Commit() error {
	if c.done {
		return errors.New("blugeindex: change already committed or discarded")
	}
	c.done = true
	x := c.x
	defer x.writeMu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if !c.built {
		if err := c.build(); err != nil {
			return err
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.reader
	x.reader = c.reader
	if c.lex != nil {
		// The copy numbers the strings as the index's lexicon did, and
		// the documents it does not hold are deleted in c.reader: the
		// name units copied from that lexicon stay right.
		x.ids.rebase(x.lex, c.lex)
		x.lex = c.lex
	} else {
		x.lex.apply(c.dl)
	}
	_ = old.Close() // no search holds it: searches hold mu shared
	return nil
}

// writeBatches writes the batches of one change, each on its own goroutine:
// bluge builds their segments side by side and introduces each as it is
// done. Searches see none of them before Commit swaps the reader.
func writeBatches(w *bluge.Writer, batches []*index.Batch) error {
	if len(batches) == 1 {
		return w.Batch(batches[0])
	}
	errs := make([]error, len(batches))
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Go(func() { errs[i] = w.Batch(b) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Discard drops the change; a built one is undone first.
func (c *change) Discard() {
	if c.done {
		return
	}
	c.done = true
	x := c.x
	defer x.writeMu.Unlock()
	if !c.built {
		return
	}
	if err := c.undo(); err != nil {
		x.mu.Lock()
		x.failed = fmt.Errorf("blugeindex: undoing a discarded change: %w", err)
		x.mu.Unlock()
	}
}

// document maps an analysed resource to its bluge document. The document id
// is the prefixed key, which bluge stores, so a search can return keys.
func document(key core.Key, d *docAnalysis) *bluge.Document {
	doc := bluge.NewDocument(key.String())
	doc.AddField(bluge.NewStoredOnlyField(fieldSource, d.source))
	// Keywords are one term each, as bluge's keyword fields would index
	// them (two id fields of one term are one field of two).
	ids := idTerms(key) // never alike: a bare id and a prefixed key
	terms := make([]termFreq, len(ids)+1)
	for i, t := range ids {
		terms[i] = termFreq{text: t, n: 1}
	}
	terms[len(ids)] = termFreq{text: string(key.Catalog), n: 1}
	// The document's fields and their terms' bytes are one allocation
	// each, not two per field (a bulk load builds a dozen per resource).
	n, size := 2, termBytes(terms)
	for i := range textFields {
		if len(d.fields[i]) > 0 {
			n++
			size += termBytes(d.distinct[i])
		}
	}
	fields := make([]analysedField, n)
	text := make([]byte, 0, size)
	text = fields[0].fill(fieldCatalog, 1, terms[len(ids):], text)
	text = fields[1].fill(fieldID, len(ids), terms[:len(ids)], text)
	doc.AddField(&fields[0])
	doc.AddField(&fields[1])
	at := 2
	for i, f := range textFields {
		if len(d.fields[i]) == 0 {
			// No empty fields: BM25 averages field length over the
			// documents that have the field.
			continue
		}
		text = fields[at].fill(f.name, len(d.fields[i]), d.distinct[i], text)
		doc.AddField(&fields[at])
		at++
	}
	return doc
}

// fieldSource stores each resource as indexed (JSON): when it changes, its
// old analysis is computed again from it, so the heap keeps no resources.
const fieldSource = "_src"

// sources reads the indexed version of resources from the reader of the last
// commit. The caller holds writeMu (no commit swaps the reader meanwhile).
func (x *Index) sources(keys []core.Key) (map[core.Key]*core.Resource, error) {
	return sourcesIn(x.reader, keys)
}

// sourcesIn reads the version of resources that reader r holds.
func sourcesIn(r *bluge.Reader, keys []core.Key) (map[core.Key]*core.Resource, error) {
	out := make(map[core.Key]*core.Resource, len(keys))
	for _, k := range keys {
		q := bluge.NewTermQuery(k.String()).SetField("_id")
		it, err := r.Search(context.Background(), bluge.NewTopNSearch(1, q))
		if err != nil {
			return nil, fmt.Errorf("blugeindex: reading %s: %w", k, err)
		}
		m, err := it.Next()
		if err != nil || m == nil {
			return nil, fmt.Errorf("blugeindex: %s is indexed but not found (%v)", k, err)
		}
		var r core.Resource
		var decodeErr error
		err = m.VisitStoredFields(func(field string, value []byte) bool {
			if field == fieldSource {
				decodeErr = json.Unmarshal(value, &r)
				return false
			}
			return true
		})
		if err == nil {
			err = decodeErr
		}
		if err != nil {
			return nil, fmt.Errorf("blugeindex: reading %s: %w", k, err)
		}
		out[k] = &r
	}
	return out, nil
}
