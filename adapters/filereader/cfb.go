package filereader

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
)

// A minimal, bounded reader of Microsoft's Compound File Binary format (the
// OLE2 container of .xls files), over a file held in memory. Every chain
// walk is bounded by the number of sectors and refuses cycles; every size
// is checked against the file before anything is allocated.

const (
	cfbEndOfChain = 0xFFFFFFFE
	cfbFree       = 0xFFFFFFFF
	cfbNoStream   = 0xFFFFFFFF
	cfbHeaderLen  = 512
	cfbDirLen     = 128
)

type cfbEntry struct {
	name  string
	typ   byte // 1 storage, 2 stream, 5 root
	start uint32
	size  uint64
}

type cfbFile struct {
	data       []byte
	sectorSize int
	miniSize   int
	cutoff     uint64
	nSectors   int
	fat        []uint32
	miniFAT    []uint32
	entries    []cfbEntry
	miniStream []byte
}

func cfbErr(format string, args ...any) error {
	return fmt.Errorf("corrupt or truncated .xls container: "+format, args...)
}

func openCFB(data []byte) (*cfbFile, error) {
	if len(data) < cfbHeaderLen {
		return nil, cfbErr("%d bytes, shorter than its header", len(data))
	}
	le := binary.LittleEndian
	major := le.Uint16(data[26:])
	shift := le.Uint16(data[30:])
	miniShift := le.Uint16(data[32:])
	switch {
	case major == 3 && shift == 9, major == 4 && shift == 12:
	default:
		return nil, cfbErr("unsupported version %d with sector shift %d", major, shift)
	}
	if miniShift != 6 {
		return nil, cfbErr("unsupported mini sector shift %d", miniShift)
	}
	c := &cfbFile{data: data, sectorSize: 1 << shift, miniSize: 64, cutoff: uint64(le.Uint32(data[56:]))}
	if c.cutoff != 4096 {
		return nil, cfbErr("unsupported mini stream cutoff %d", c.cutoff)
	}
	// Sector i starts at (i+1)*sectorSize; the last one may be short.
	c.nSectors = (len(data) - c.sectorSize + c.sectorSize - 1) / c.sectorSize
	if len(data) <= c.sectorSize {
		c.nSectors = 0
	}
	numFAT := le.Uint32(data[44:])
	dirStart := le.Uint32(data[48:])
	miniFATStart := le.Uint32(data[60:])
	numMiniFAT := le.Uint32(data[64:])
	difatStart := le.Uint32(data[68:])
	numDIFAT := le.Uint32(data[72:])
	if numFAT == 0 || uint64(numFAT) > uint64(c.nSectors) {
		return nil, cfbErr("%d allocation-table sectors in a file of %d sectors", numFAT, c.nSectors)
	}
	if uint64(numDIFAT) > uint64(c.nSectors) || uint64(numMiniFAT) > uint64(c.nSectors) {
		return nil, cfbErr("sector counts exceed the file")
	}

	// The FAT sectors: 109 in the header, the rest in the DIFAT chain.
	fatSectors := make([]uint32, 0, numFAT)
	for i := 0; i < 109 && uint32(len(fatSectors)) < numFAT; i++ {
		fatSectors = append(fatSectors, le.Uint32(data[76+4*i:]))
	}
	perDIFAT := c.sectorSize/4 - 1
	seen := map[uint32]bool{}
	for sid, n := difatStart, uint32(0); uint32(len(fatSectors)) < numFAT; n++ {
		if sid == cfbEndOfChain || sid == cfbFree || n >= numDIFAT {
			return nil, cfbErr("the sector allocation table lists %d of %d sectors", len(fatSectors), numFAT)
		}
		if seen[sid] {
			return nil, cfbErr("cycle in the DIFAT chain")
		}
		seen[sid] = true
		sec, err := c.sector(sid)
		if err != nil {
			return nil, err
		}
		for i := 0; i < perDIFAT && uint32(len(fatSectors)) < numFAT; i++ {
			fatSectors = append(fatSectors, le.Uint32(sec[4*i:]))
		}
		sid = le.Uint32(sec[4*perDIFAT:])
	}
	c.fat = make([]uint32, 0, len(fatSectors)*c.sectorSize/4)
	for _, sid := range fatSectors {
		sec, err := c.sector(sid)
		if err != nil {
			return nil, err
		}
		for i := 0; i < c.sectorSize; i += 4 {
			c.fat = append(c.fat, le.Uint32(sec[i:]))
		}
	}

	// Directory.
	dir, err := c.chain(dirStart, c.fat, uint64(c.nSectors)*uint64(c.sectorSize), false)
	if err != nil {
		return nil, fmt.Errorf("%w (directory)", err)
	}
	for off := 0; off+cfbDirLen <= len(dir); off += cfbDirLen {
		e := dir[off : off+cfbDirLen]
		typ := e[66]
		if typ == 0 {
			continue
		}
		nameLen := int(le.Uint16(e[64:]))
		if nameLen > 64 {
			nameLen = 64
		}
		u := make([]uint16, 0, 32)
		for i := 0; i+1 < nameLen; i += 2 {
			ch := le.Uint16(e[i:])
			if ch == 0 {
				break
			}
			u = append(u, ch)
		}
		size := le.Uint64(e[120:])
		if major == 3 {
			size &= 0xFFFFFFFF
		}
		c.entries = append(c.entries, cfbEntry{name: string(utf16.Decode(u)), typ: typ, start: le.Uint32(e[116:]), size: size})
	}
	if len(c.entries) == 0 || c.entries[0].typ != 5 {
		return nil, cfbErr("no root entry")
	}
	root := c.entries[0]
	if root.size > 0 {
		if c.miniStream, err = c.chain(root.start, c.fat, root.size, true); err != nil {
			return nil, fmt.Errorf("%w (mini stream)", err)
		}
		if numMiniFAT > 0 {
			mf, err := c.chain(miniFATStart, c.fat, uint64(numMiniFAT)*uint64(c.sectorSize), true)
			if err != nil {
				return nil, fmt.Errorf("%w (mini allocation table)", err)
			}
			c.miniFAT = make([]uint32, len(mf)/4)
			for i := range c.miniFAT {
				c.miniFAT[i] = le.Uint32(mf[4*i:])
			}
		}
	}
	return c, nil
}

// sector returns sector sid, which must lie whole in the file.
func (c *cfbFile) sector(sid uint32) ([]byte, error) {
	if uint64(sid) >= uint64(c.nSectors) {
		return nil, cfbErr("sector %d is beyond the end of the file", sid)
	}
	off := (int(sid) + 1) * c.sectorSize
	if off+c.sectorSize > len(c.data) {
		return nil, cfbErr("sector %d is cut short", sid)
	}
	return c.data[off : off+c.sectorSize], nil
}

// chain reads a stream of size bytes from the regular sectors (or, when
// mini, from the mini stream). exact demands the chain cover size; else the
// whole chain is read, up to size.
func (c *cfbFile) chain(start uint32, table []uint32, size uint64, exact bool) ([]byte, error) {
	return c.readChain(start, table, size, exact, false)
}

func (c *cfbFile) readChain(start uint32, table []uint32, size uint64, exact, mini bool) ([]byte, error) {
	unit := c.sectorSize
	avail := uint64(len(c.data))
	if mini {
		unit = c.miniSize
		avail = uint64(len(c.miniStream))
	}
	if size > avail {
		return nil, cfbErr("a stream of %d bytes in %d bytes of storage", size, avail)
	}
	out := make([]byte, 0, size)
	visited := make([]bool, len(table))
	for sid := start; uint64(len(out)) < size; {
		if sid == cfbEndOfChain {
			if exact {
				return nil, cfbErr("a stream ends after %d of %d bytes", len(out), size)
			}
			break
		}
		if uint64(sid) >= uint64(len(table)) {
			return nil, cfbErr("sector %d is outside the allocation table", sid)
		}
		if visited[sid] {
			return nil, cfbErr("cycle in a sector chain")
		}
		visited[sid] = true
		var sec []byte
		if mini {
			off := int(sid) * unit
			if off+unit > len(c.miniStream) {
				// The last mini sector may be short when it ends the stream.
				if off >= len(c.miniStream) || uint64(len(out))+uint64(len(c.miniStream)-off) < size {
					return nil, cfbErr("mini sector %d is beyond the mini stream", sid)
				}
				sec = c.miniStream[off:]
			} else {
				sec = c.miniStream[off : off+unit]
			}
		} else {
			var err error
			if sec, err = c.sector(sid); err != nil {
				// The file's last sector may be short when it ends the stream.
				off := (int(sid) + 1) * unit
				need := size - uint64(len(out))
				if uint64(sid) < uint64(c.nSectors) && off < len(c.data) && uint64(len(c.data)-off) >= min(need, uint64(unit)) {
					sec = c.data[off:]
				} else {
					return nil, err
				}
			}
		}
		take := min(uint64(len(sec)), size-uint64(len(out)))
		out = append(out, sec[:take]...)
		sid = table[sid]
	}
	return out, nil
}

// stream returns the named stream's bytes (name compared case-insensitively).
func (c *cfbFile) stream(name string) ([]byte, bool, error) {
	for _, e := range c.entries {
		if e.typ != 2 || !strings.EqualFold(e.name, name) {
			continue
		}
		if e.size < c.cutoff {
			b, err := c.readChain(e.start, c.miniFAT, e.size, true, true)
			return b, true, err
		}
		b, err := c.readChain(e.start, c.fat, e.size, true, false)
		return b, true, err
	}
	return nil, false, nil
}

// has tells whether a stream or storage of that name exists.
func (c *cfbFile) has(name string) bool {
	for _, e := range c.entries {
		if strings.EqualFold(e.name, name) {
			return true
		}
	}
	return false
}
