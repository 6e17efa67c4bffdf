package blugeindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/climatesearch/climatesearch/core"
)

// The lexicon snapshot: what the index knows besides bluge's segments,
// written at a clean stop so that the next start opens the index instead of
// analysing every resource again. It is a plain binary file (unsigned
// varints, length-prefixed strings) ending in a CRC-32 of everything before
// it; a file that does not end so is not used. What can be derived from what
// it holds (the compound dictionaries and stems, the typo indexes, the id
// and catalog counts) is derived at load, not stored.

// snapshotMagic starts every snapshot; its last byte is the format version.
const snapshotMagic = "climatesearch-lexicon\x00\x07"

// snapshotWriter appends the encoding to a buffer.
type snapshotWriter struct{ b []byte }

func (e *snapshotWriter) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *snapshotWriter) int(v int64) { e.b = binary.AppendVarint(e.b, v) }

func (e *snapshotWriter) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *snapshotWriter) bytes(b []byte) {
	e.uint(uint64(len(b)))
	e.b = append(e.b, b...)
}

// snapshotChunks is how many parts the documents are written in: each is
// encoded and decoded on its own core.
const snapshotChunks = 8

// writeSnapshot encodes the lexicon under a mark.
func writeSnapshot(w io.Writer, mark string, lex *lexicon) error {
	// The encoding's only garbage is its buffers growing; a collection
	// meanwhile would scan the whole lexicon for nothing (at a million
	// documents, more than the encoding itself).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	e := &snapshotWriter{b: make([]byte, 0, 1<<20)}
	e.b = append(e.b, snapshotMagic...)
	e.str(mark)
	e.uint(uint64(len(textFields)))

	e.uint(uint64(len(lex.strOf)))
	for _, s := range lex.strOf {
		e.str(s)
	}
	// Per language: the words and label words with their counts.
	e.uint(uint64(len(languages)))
	for _, la := range languages {
		e.str(string(la.lang))
		counts(e, lex.words[la.lang])
		counts(e, lex.labels[la.lang])
	}
	for i := range textFields {
		idCounts(e, lex.df[i])
		e.int(lex.fieldDocs[i])
		e.int(lex.fieldLen[i])
	}
	// The documents, each with its part of the thesaurus's name heads, in
	// chunks encoded side by side, each written as its count, its length
	// in bytes and its bytes.
	keys := make([]core.Key, 0, len(lex.docs))
	docs := make([]*docAnalysis, 0, len(lex.docs))
	for k, d := range lex.docs {
		keys, docs = append(keys, k), append(docs, d)
	}
	parts := make([]snapshotWriter, snapshotChunks)
	for c := range parts {
		parts[c].b = make([]byte, 0, 192*(len(keys)/len(parts)+1)) // about a document's size
	}
	onCores(len(parts), func(c int) {
		for i := c * len(keys) / len(parts); i < (c+1)*len(keys)/len(parts); i++ {
			parts[c].doc(lex, keys[i], docs[i])
		}
	})
	e.uint(uint64(len(parts)))
	// Written piece by piece: the documents are not copied again.
	pieces := [][]byte{e.b}
	for c := range parts {
		var h snapshotWriter
		h.uint(uint64((c+1)*len(keys)/len(parts) - c*len(keys)/len(parts)))
		h.uint(uint64(len(parts[c].b)))
		pieces = append(pieces, h.b, parts[c].b)
	}
	var crc uint32
	for _, p := range pieces {
		crc = crc32.Update(crc, crc32.IEEETable, p)
	}
	pieces = append(pieces, binary.BigEndian.AppendUint32(nil, crc))
	for _, p := range pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// doc encodes one document.
func (e *snapshotWriter) doc(lex *lexicon, k core.Key, d *docAnalysis) {
	e.str(string(k.Catalog))
	e.str(k.ID)
	e.uint(d.hash)
	e.bytes(d.kept) // packed (kept.go)
}

// idCounts writes counts by string table id.
func idCounts(e *snapshotWriter, m map[uint32]int32) {
	e.uint(uint64(len(m)))
	for id, n := range m {
		e.uint(uint64(id))
		e.int(int64(n))
	}
}

func counts[N int | int32](e *snapshotWriter, m map[string]N) {
	e.uint(uint64(len(m)))
	for w, n := range m {
		e.str(w)
		e.int(int64(n))
	}
}

// errSnapshot says a snapshot cannot be used: another format, truncated or
// damaged.
var errSnapshot = errors.New("blugeindex: unusable lexicon snapshot")

// snapshotReader decodes a snapshot held in memory (its checksum already
// verified); the first error sticks.
type snapshotReader struct {
	b      []byte
	err    error
	shorts map[string]string
}

func (d *snapshotReader) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errSnapshot}, args...)...)
	}
}

func (d *snapshotReader) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	return took(d, v, n)
}

func (d *snapshotReader) int() int64 {
	v, n := binary.Varint(d.b)
	return took(d, v, n)
}

// took consumes the n bytes of a varint just read (n <= 0: none could be).
func took[V uint64 | int64](d *snapshotReader, v V, n int) V {
	if n <= 0 {
		d.fail("bad varint")
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length and refuses one the rest of the file cannot hold.
func (d *snapshotReader) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) && n > 0 {
		d.fail("length %d with %d bytes left", n, len(d.b))
		d.b = nil
		return 0
	}
	return int(n)
}

func (d *snapshotReader) str() string {
	n := d.count()
	if d.err != nil || n == 0 {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// bytes reads a length-prefixed run of bytes, a slice of the snapshot's
// buffer: the caller copies what it keeps.
func (d *snapshotReader) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

// short reads a string of a small set (languages, catalogs) with one copy
// of each value.
func (d *snapshotReader) short() string {
	n := d.count()
	if d.err != nil || n == 0 {
		return ""
	}
	b := d.b[:n]
	d.b = d.b[n:]
	if s, ok := d.shorts[string(b)]; ok { // no allocation for the lookup
		return s
	}
	if d.shorts == nil {
		d.shorts = map[string]string{}
	}
	s := string(b)
	d.shorts[s] = s
	return s
}

// id reads a string table id.
func (d *snapshotReader) id(table []string) string {
	i := d.uint()
	if i >= uint64(len(table)) {
		d.fail("string id %d of %d", i, len(table))
		return ""
	}
	return table[i]
}

func readCounts[N int | int32](d *snapshotReader) map[string]N {
	n := d.count()
	m := make(map[string]N, min(n, 1<<20))
	for i := 0; i < n && d.err == nil; i++ {
		w := d.str()
		m[w] = N(d.int())
	}
	return m
}

// readIDCounts reads what idCounts wrote, of a table of strs strings.
func readIDCounts(d *snapshotReader, strs int) map[uint32]int32 {
	n := d.count()
	m := make(map[uint32]int32, min(n, 1<<20))
	for i := 0; i < n && d.err == nil; i++ {
		id := d.uint()
		if id >= uint64(strs) {
			d.fail("string %d of %d", id, strs)
			break
		}
		m[uint32(id)] = int32(d.int())
	}
	return m
}

// snapshotMark reads the mark of a snapshot without decoding the rest.
func snapshotMark(b []byte) (string, error) {
	if len(b) < len(snapshotMagic) || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return "", fmt.Errorf("%w: not a snapshot of this version", errSnapshot)
	}
	d := &snapshotReader{b: b[len(snapshotMagic):]}
	mark := d.str()
	return mark, d.err
}

// readSnapshot decodes a snapshot into a new lexicon and returns it with
// its mark.
func readSnapshot(b []byte) (*lexicon, string, error) {
	// What is decoded is kept: collecting meanwhile would only scan the
	// growing lexicon again and again (at a million documents, a third of
	// the load). The process is starting; nothing else allocates much.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if len(b) < len(snapshotMagic)+4 || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, "", fmt.Errorf("%w: not a snapshot of this version", errSnapshot)
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return nil, "", fmt.Errorf("%w: checksum", errSnapshot)
	}
	d := &snapshotReader{b: body[len(snapshotMagic):]}
	mark := d.str()
	if n := d.count(); n != len(textFields) {
		d.fail("%d fields, this build has %d", n, len(textFields))
	}
	lex := newLexicon()
	strOf := make([]string, d.count())
	for i := range strOf {
		strOf[i] = d.str()
	}
	lex.strOf = strOf
	lex.strs = make(map[string]uint32, len(strOf))
	for i, s := range strOf {
		lex.strs[s] = uint32(i)
	}
	if n := d.count(); n != len(languages) {
		d.fail("%d languages, this build has %d", n, len(languages))
	}
	for _, la := range languages {
		if d.err != nil {
			break
		}
		if l := core.Lang(d.str()); l != la.lang {
			d.fail("language %q where %q was expected", l, la.lang)
		}
		lex.words[la.lang] = readCounts[int32](d)
		lex.labels[la.lang] = readCounts[int](d)
	}
	for i := range textFields {
		lex.df[i] = readIDCounts(d, len(strOf))
		lex.fieldDocs[i] = d.int()
		lex.fieldLen[i] = d.int()
	}
	// The documents: each chunk decoded on its own core, with its own
	// blocks (see docChunk).
	chunks := make([]docChunk, d.count())
	if len(chunks) > 1<<10 {
		d.fail("%d chunks", len(chunks))
		chunks = nil
	}
	for c := range chunks {
		chunks[c].n = d.count()
		size := d.count()
		if d.err != nil {
			break
		}
		chunks[c].r = snapshotReader{b: d.b[:size]}
		d.b = d.b[size:]
	}
	if d.err != nil {
		return nil, "", d.err
	}
	onCores(len(chunks), func(c int) { chunks[c].decode(strOf) })
	var keys []core.Key
	var analysed []*docAnalysis
	for c := range chunks {
		if err := chunks[c].r.err; err != nil {
			return nil, "", err
		}
		if len(chunks[c].r.b) != 0 {
			return nil, "", fmt.Errorf("%w: %d bytes after a chunk of documents", errSnapshot, len(chunks[c].r.b))
		}
		keys = append(keys, chunks[c].keys...)
		analysed = append(analysed, chunks[c].docs...)
		chunks[c] = docChunk{}
	}
	// The maps over documents are built on every core: at a million
	// documents they are most of the load.
	var wg sync.WaitGroup
	wg.Go(func() {
		lex.docs = make(map[core.Key]*docAnalysis, len(keys))
		for i, k := range keys {
			lex.docs[k] = analysed[i]
		}
	})
	wg.Go(func() {
		lex.ids = make(map[idHash]int32, len(keys))
		for _, k := range keys {
			lex.catalogs[k.Catalog]++
			lex.ids[keyHash(k)]++
		}
	})
	wg.Go(func() { // the rings, from the documents' synonym entries
		var entries []uint32
		for i, k := range keys {
			entries = analysed[i].appendEntries(entries[:0])
			lex.thes.add(k, entries)
		}
	})
	wg.Wait()
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the lexicon", len(d.b))
	}
	if d.err != nil {
		return nil, "", d.err
	}
	// What is derived from the counts: dictionaries, stems, typo indexes.
	for _, la := range languages {
		words := make(map[string]bool, len(lex.words[la.lang]))
		for w := range maps.Keys(lex.words[la.lang]) {
			words[w] = true
		}
		lex.langs[la.lang] = newLangLex(la, words, nil, nil)
		lex.fuzzy[la.lang] = newFuzzyIndex(lex.labels[la.lang], nil)
	}
	return lex, mark, nil
}

// docChunk is one chunk of the documents of a snapshot, decoded on its own.
type docChunk struct {
	n    int
	r    snapshotReader
	keys []core.Key
	docs []*docAnalysis
}

// decode reads the chunk's documents. The documents and their small slices
// come from a few large blocks: a million allocations less per million
// documents. Nothing appends to these slices (a change replaces a
// document's analysis whole).
func (c *docChunk) decode(strOf []string) {
	d := &c.r
	c.keys = make([]core.Key, 0, c.n)
	c.docs = make([]*docAnalysis, 0, c.n)
	analyses := make([]docAnalysis, c.n)
	var packed byteBlocks
	for i := 0; i < c.n && d.err == nil; i++ {
		k := core.Key{Catalog: core.CatalogID(d.short()), ID: d.str()}
		doc := &analyses[i]
		doc.hash = d.uint()
		doc.kept = packed.take(d.bytes())
		if d.err == nil && !validPacked(doc.kept, len(strOf)) {
			d.fail("the words, names and thesaurus ids of %s", k)
		}
		c.keys = append(c.keys, k)
		c.docs = append(c.docs, doc)
	}
}

// byteBlocks hands out copies of documents' packings from large blocks.
type byteBlocks struct{ free []byte }

func (b *byteBlocks) take(src []byte) []byte {
	n := len(src)
	if n > len(b.free) {
		if n > 1<<12 {
			return append([]byte(nil), src...)
		}
		b.free = make([]byte, 1<<18)
	}
	out := b.free[:n:n]
	b.free = b.free[n:]
	copy(out, src)
	return out
}

// onCores calls fn(0..n-1) on every core, each call whole.
func onCores(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}
