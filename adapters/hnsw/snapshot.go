package hnsw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"unsafe"
)

// A snapshot is the whole graph as it is in memory, so that a start takes
// it up in the time it takes to read it instead of inserting every vector
// again (minutes per 100,000 on two cores). Layout, little-endian:
//
//	magic "CSHNSW" 0 1, version u32 (2; 1 is still read)
//	header: embedder id, mark (strings: u32 length, bytes), dim u32, catalogs u32
//	per catalog: name, M u32, efConstruction u32, slots u32, top u64,
//	  the level generator's state (string), free slots (u32 count, u32 each),
//	  state u8 per slot, level u8 per slot, id lengths u32 per slot, the ids'
//	  bytes (u64 length, bytes), vectors (slots·dim int8 codes, then slots
//	  float32 scales; version 1: slots·dim float32), layer-0 lists
//	  (slots·(2M+1) u32), upper lists (u64 words, the words of every node
//	  with a level above 0, in slot order)
//	CRC-32C of everything before, u32
//
// The arrays are the index's own, written and read as they are (one copy
// on a little-endian machine), so a million vectors are about 0.6 GB and
// read at the disk's speed. Reading checks every length against what is
// left of the file before allocating, the checksum at the end, and every
// link, level and state, so a truncated or damaged file is refused
// (errSnapshot), never half taken up.

const snapshotVersion = 2

// snapshotFloats is the last version that kept float32 vectors: its
// vectors are quantised as they are read, so an upgrade keeps the graph
// instead of rebuilding it (minutes per 100,000 vectors).
const snapshotFloats = 1

var snapshotMagic = [8]byte{'C', 'S', 'H', 'N', 'S', 'W', 0, 1}

// errSnapshot is the error of a snapshot that cannot be taken up.
var errSnapshot = errors.New("hnsw: unusable snapshot")

// snapHeader is what a snapshot says about itself before its graphs.
type snapHeader struct {
	version  uint32
	embedder string
	mark     string
	dim      int
	catalogs int
}

// snapWriter writes the snapshot through a buffer, checksumming as it goes.
type snapWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	err error
	buf [8]byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newSnapWriter(w io.Writer) *snapWriter {
	return &snapWriter{w: bufio.NewWriterSize(w, 1<<20), crc: crc32.New(castagnoli)}
}

func (w *snapWriter) bytes(b []byte) {
	if w.err != nil {
		return
	}
	w.crc.Write(b)
	_, w.err = w.w.Write(b)
}

func (w *snapWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:4], v)
	w.bytes(w.buf[:4])
}

func (w *snapWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:8], v)
	w.bytes(w.buf[:8])
}

func (w *snapWriter) str(s string) {
	w.u32(uint32(len(s)))
	w.bytes([]byte(s))
}

// words writes u32s as they are in memory on a little-endian machine,
// through a conversion otherwise.
func (w *snapWriter) words(s []uint32) {
	if littleEndian {
		w.bytes(wordBytes(s))
		return
	}
	var chunk [4096]byte
	for len(s) > 0 {
		n := min(len(s), len(chunk)/4)
		for i, v := range s[:n] {
			binary.LittleEndian.PutUint32(chunk[4*i:], v)
		}
		w.bytes(chunk[:4*n])
		s = s[n:]
	}
}

// finish writes the checksum and flushes.
func (w *snapWriter) finish() error {
	if w.err != nil {
		return w.err
	}
	sum := w.crc.Sum32()
	binary.LittleEndian.PutUint32(w.buf[:4], sum)
	if _, err := w.w.Write(w.buf[:4]); err != nil {
		return err
	}
	return w.w.Flush()
}

// snapReader reads a snapshot of a known size, checksumming as it goes and
// refusing any length longer than what is left.
type snapReader struct {
	r    *bufio.Reader
	crc  hash.Hash32
	left int64 // bytes left before the checksum
	err  error
	buf  [8]byte
}

func newSnapReader(r io.Reader, size int64) *snapReader {
	return &snapReader{r: bufio.NewReaderSize(r, 1<<20), crc: crc32.New(castagnoli), left: size - 4}
}

func (r *snapReader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errSnapshot, fmt.Sprintf(format, a...))
	}
}

// room reports whether n more bytes can be read, failing otherwise.
func (r *snapReader) room(n uint64) bool {
	if r.err != nil {
		return false
	}
	if r.left < 0 || n > uint64(r.left) {
		r.fail("truncated")
		return false
	}
	return true
}

func (r *snapReader) bytes(b []byte) {
	if !r.room(uint64(len(b))) {
		return
	}
	if _, err := io.ReadFull(r.r, b); err != nil {
		r.fail("truncated: %v", err)
		return
	}
	r.left -= int64(len(b))
	r.crc.Write(b)
}

func (r *snapReader) u32() uint32 {
	r.bytes(r.buf[:4])
	if r.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint32(r.buf[:4])
}

func (r *snapReader) u64() uint64 {
	r.bytes(r.buf[:8])
	if r.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(r.buf[:8])
}

// str reads a string of at most maxLen bytes.
func (r *snapReader) str(maxLen int) string {
	n := r.u32()
	if r.err != nil {
		return ""
	}
	if int64(n) > int64(maxLen) {
		r.fail("string of %d bytes", n)
		return ""
	}
	b := make([]byte, n)
	r.bytes(b)
	return string(b)
}

// words reads into s.
func (r *snapReader) words(s []uint32) {
	if !r.room(4 * uint64(len(s))) {
		return
	}
	if littleEndian {
		r.bytes(wordBytes(s))
		return
	}
	var chunk [4096]byte
	for len(s) > 0 && r.err == nil {
		n := min(len(s), len(chunk)/4)
		r.bytes(chunk[:4*n])
		for i := range s[:n] {
			s[i] = binary.LittleEndian.Uint32(chunk[4*i:])
		}
		s = s[n:]
	}
}

// check reads the checksum and compares it with what was read.
func (r *snapReader) check() error {
	if r.err != nil {
		return r.err
	}
	if r.left != 0 {
		return fmt.Errorf("%w: %d bytes after the graphs", errSnapshot, r.left)
	}
	want := r.crc.Sum32()
	if _, err := io.ReadFull(r.r, r.buf[:4]); err != nil {
		return fmt.Errorf("%w: no checksum: %v", errSnapshot, err)
	}
	if got := binary.LittleEndian.Uint32(r.buf[:4]); got != want {
		return fmt.Errorf("%w: checksum %08x, content %08x", errSnapshot, got, want)
	}
	return nil
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// wordBytes is the memory of s as bytes.
func wordBytes(s []uint32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}

// codeBytes is the memory of s as bytes.
func codeBytes(s []int8) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// quantized reads version 1's float32 vectors, one at a time, into each
// slot's codes and scales (rotated, as Add does). A free slot's vector is
// whatever was left there; it is read and dropped.
func (r *snapReader) quantized(codes func(uint32) []int8, scales []float32, states []byte, rot *rotation) {
	dim := len(rot.perm)
	v, rv := make([]float32, dim), make([]float32, dim)
	for s := range scales {
		r.words(floatWords(v))
		if r.err != nil {
			return
		}
		if slotState(states[s]) == free || !usable(v) {
			continue
		}
		scales[s] = quantize(rot.apply(v, rv), codes(uint32(s)))
	}
}

// floatWords is the memory of s as u32s (the float32 bit patterns).
func floatWords(s []float32) []uint32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// writeHeader writes h, in h.version's format (snapshotVersion when 0).
func writeHeader(w *snapWriter, h snapHeader) {
	if h.version == 0 {
		h.version = snapshotVersion
	}
	w.bytes(snapshotMagic[:])
	w.u32(h.version)
	w.str(h.embedder)
	w.str(h.mark)
	w.u32(uint32(h.dim))
	w.u32(uint32(h.catalogs))
}

func readHeader(r *snapReader) snapHeader {
	var magic [8]byte
	r.bytes(magic[:])
	if r.err == nil && magic != snapshotMagic {
		r.fail("not a snapshot of this index")
	}
	v := r.u32()
	if r.err == nil && v != snapshotVersion && v != snapshotFloats {
		r.fail("format version %d, this build reads %d and %d", v, snapshotFloats, snapshotVersion)
	}
	h := snapHeader{version: v, embedder: r.str(1 << 12), mark: r.str(1 << 12)}
	h.dim = int(r.u32())
	h.catalogs = int(r.u32())
	return h
}

// save writes the graph; the caller holds vacMu and mu's write lock, so no
// insert, delete or vacuum step is under way and no node is pending.
func (x *Index) save(w *snapWriter) {
	used := int(x.used.Load())
	w.u32(uint32(x.m))
	w.u32(uint32(x.efC))
	w.u32(uint32(used))
	w.u64(x.top.Load())
	x.rngMu.Lock()
	st, err := x.pcg.MarshalBinary()
	x.rngMu.Unlock()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.str(string(st))
	w.u32(uint32(len(x.free)))
	w.words(x.free)
	b := make([]byte, used)
	for s := range used {
		b[s] = byte(x.state[s])
	}
	w.bytes(b)
	upper := 0
	for s := range used {
		b[s] = byte(x.nodes[s].level)
		upper += len(x.nodes[s].upper)
	}
	w.bytes(b)
	lens := make([]uint32, used)
	total := 0
	for s := range used {
		lens[s] = uint32(len(x.nodes[s].id))
		total += len(x.nodes[s].id)
	}
	w.words(lens)
	ids := make([]byte, 0, total)
	for s := range used {
		ids = append(ids, x.nodes[s].id...)
	}
	w.u64(uint64(total))
	w.bytes(ids)
	x.vecs.chunks(used, func(c []int8) { w.bytes(codeBytes(c)) })
	w.words(floatWords(x.scales[:used]))
	x.l0.chunks(used, w.words)
	w.u64(uint64(upper))
	for s := range used {
		w.words(x.nodes[s].upper)
	}
}

// load reads a graph saved by save, in the given format version, into a
// new index with the options given, which must have the dimension, M and
// efConstruction it was built with (others may differ: they are read at
// search time).
func load(r *snapReader, version uint32, dim int, opt Options) *Index {
	x := New(dim, opt)
	if m, efC := int(r.u32()), int(r.u32()); r.err == nil && (m != x.m || efC != x.efC) {
		r.fail("built with M %d, efConstruction %d; configured %d, %d", m, efC, x.m, x.efC)
	}
	used := int(r.u32())
	top := r.u64()
	st := r.str(64)
	if r.err != nil {
		return nil
	}
	if err := x.pcg.UnmarshalBinary([]byte(st)); err != nil {
		r.fail("level generator: %v", err)
		return nil
	}
	nfree := r.u32()
	if !r.room(4 * uint64(nfree)) {
		return nil
	}
	x.free = make([]uint32, nfree)
	r.words(x.free)
	// Every slot takes at least its state, level, id length, vector and
	// layer-0 list: refuse a count the file cannot hold before allocating.
	vecBytes := dim + 4
	if version == snapshotFloats {
		vecBytes = 4 * dim
	}
	if !r.room(uint64(used) * uint64(2+4+vecBytes+4*(x.m0+1))) {
		return nil
	}
	states := make([]byte, used)
	r.bytes(states)
	levels := make([]byte, used)
	r.bytes(levels)
	lens := make([]uint32, used)
	r.words(lens)
	total := r.u64()
	if !r.room(total) {
		return nil
	}
	idBytes := make([]byte, total)
	r.bytes(idBytes)
	if r.err != nil {
		return nil
	}
	x.nodes = make([]node, used)
	x.state = make([]uint32, used)
	// The slots' ids and states are checked and the id map built on
	// another core while the rest of the file is read: at a million
	// vectors the map alone is a third of the load's CPU.
	idPass := make(chan error, 1)
	go func() { idPass <- x.loadIDs(states, levels, lens, string(idBytes)) }()
	x.scales = make([]float32, used)
	x.vecs.grow(used)
	if version == snapshotFloats {
		r.quantized(x.vec, x.scales, states, x.rot)
	} else {
		x.vecs.chunks(used, func(c []int8) { r.bytes(codeBytes(c)) })
		r.words(floatWords(x.scales))
	}
	x.l0.grow(used)
	x.l0.chunks(used, r.words)
	words := r.u64()
	var upper []uint32
	if r.room(4 * words) { // else r.err is set
		upper = make([]uint32, words)
		r.words(upper)
	}
	if err := <-idPass; err != nil {
		r.fail("%v", err)
	}
	if r.err != nil {
		return nil
	}

	// The graph must make sense, so that a damaged file whose checksum
	// (read after every graph) happens to hold, or a bug, cannot make a
	// search index out of range. loadIDs has checked each slot's id,
	// state and level.
	uoff := 0
	for s := range used {
		lv := int(levels[s])
		if slotState(states[s]) == free {
			continue
		}
		nd := &x.nodes[s]
		if lv > 0 {
			k := lv * (x.m + 1)
			if k > len(upper)-uoff {
				r.fail("upper lists overrun")
				return nil
			}
			nd.upper = upper[uoff : uoff+k : uoff+k]
			uoff += k
		}
		for l := 0; l <= lv; l++ {
			w := x.linkWords(uint32(s), l)
			if int(w[0]) > len(w)-1 {
				r.fail("slot %d layer %d: %d links", s, l, w[0])
				return nil
			}
			for _, o := range w[1 : 1+w[0]] {
				if int(o) >= used || int(levels[o]) < l || states[o] == byte(free) {
					r.fail("slot %d layer %d links to %d", s, l, o)
					return nil
				}
			}
		}
	}
	if uoff != len(upper) {
		r.fail("%d link words left over", len(upper)-uoff)
		return nil
	}
	for _, s := range x.free {
		if int(s) >= used || x.state[s] != free {
			r.fail("free slot %d is not free", s)
			return nil
		}
	}
	if top != 0 {
		e, l := entryOf(top), topLevel(top)
		if int(e) >= used || x.state[e] != live || int(levels[e]) != l {
			r.fail("entry point %d at level %d", e, l)
			return nil
		}
	} else if len(x.ids) > 0 {
		r.fail("no entry point for %d vectors", len(x.ids))
		return nil
	}
	x.top.Store(top)
	x.used.Store(uint32(used))
	x.live.Store(int64(len(x.ids)))
	return x
}

// loadIDs sets each slot's id, level and state from a snapshot's columns,
// builds the id map and counts the dead slots, checking that the ids fill
// all (in slot order) and that each state, level and live id makes sense.
// It touches no links, so load reads and checks them meanwhile.
func (x *Index) loadIDs(states, levels []byte, lens []uint32, all string) error {
	x.ids = make(map[string]uint32, len(states))
	off := 0
	for s := range states {
		n := int(lens[s])
		if n > len(all)-off {
			return errors.New("ids overrun")
		}
		id := all[off : off+n]
		off += n
		lv := int(levels[s])
		st := slotState(states[s])
		if lv > levelCap || st > dead || st == pending {
			return fmt.Errorf("slot %d: level %d, state %d", s, lv, st)
		}
		nd := &x.nodes[s]
		nd.id, nd.level = id, int32(lv)
		x.state[s] = st
		switch st {
		case free:
			if n != 0 || lv != 0 {
				return fmt.Errorf("free slot %d holds a node", s)
			}
		case live:
			if _, dup := x.ids[id]; dup || id == "" {
				return fmt.Errorf("slot %d: id %q repeated or empty", s, id)
			}
			x.ids[id] = uint32(s)
		case dead:
			x.dead++
		}
	}
	if off != len(all) {
		return fmt.Errorf("%d id bytes left over", len(all)-off)
	}
	return nil
}
