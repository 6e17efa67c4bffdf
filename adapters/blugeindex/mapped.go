package blugeindex

import (
	"io"
	"sync"
	"time"

	"github.com/blevesearch/mmap-go"
	"github.com/blugelabs/bluge/index"
	"github.com/blugelabs/bluge/index/lock"
	segment "github.com/blugelabs/bluge_segment_api"
)

// The segment files' mapped pages.
//
// bluge reads its segment files through read-only mappings, and every page
// a search or a merge touched stayed in the process's resident set until
// the kernel needed memory: the long postings lists are read once, whole,
// to build their blocks (blocks.go) and then read from the heap, the key
// cache reads each segment's ids once, a merge reads its segments whole,
// but the file pages stayed mapped. At 1,000,000 resources that was 530
// MiB after the scale script's searches, a quarter of the process's RSS
// (PERFORMANCE.md 12w). So the index maps the segments itself (bluge's
// loader otherwise unchanged) and, every segmentReleaseEvery, gives their
// pages back to the page cache (releaseMapping). What stays resident is
// what the last interval's searches and merges touched; a page touched
// again is mapped again from the page cache by a minor fault, without
// reading the disk.

// segmentReleaseEvery is how often the segments' pages are given back.
var segmentReleaseEvery = 10 * time.Second // a variable for tests

// segmentMaps holds the index's live segment mappings.
type segmentMaps struct {
	mu      sync.Mutex
	live    map[*byte][]byte // by first byte: a mapping is never empty
	ticking bool             // a release loop runs (while any is live)
}

// directory is bluge's directory at path, loading segments through m.
func (m *segmentMaps) directory(path string) func() index.Directory {
	return func() index.Directory {
		d := index.NewFileSystemDirectory(path)
		d.SetLoadMMapFunc(m.load)
		return d
	}
}

// load is bluge's index.LoadMMapAlways with the mapping registered until
// bluge closes the segment.
func (m *segmentMaps) load(f lock.LockedFile) (*segment.Data, io.Closer, error) {
	mm, err := mmap.Map(f.File(), mmap.RDONLY, 0)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	if len(mm) > 0 {
		m.add(mm)
	}
	return segment.NewDataBytes(mm), closer(func() error {
		if len(mm) > 0 {
			m.remove(mm)
		}
		err := mm.Unmap()
		if err2 := f.Close(); err == nil {
			err = err2
		}
		return err
	}), nil
}

type closer func() error

func (c closer) Close() error { return c() }

func (m *segmentMaps) add(b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live == nil {
		m.live = map[*byte][]byte{}
	}
	m.live[&b[0]] = b
	if !m.ticking {
		m.ticking = true
		go m.loop()
	}
}

// remove forgets a mapping before it is unmapped: a release holds mu, so
// it never advises a range that is unmapped (and may be reused) meanwhile.
func (m *segmentMaps) remove(b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.live, &b[0])
}

// loop releases the live mappings every segmentReleaseEvery and ends once
// none is left (the index closed).
func (m *segmentMaps) loop() {
	t := time.NewTicker(segmentReleaseEvery)
	defer t.Stop()
	for range t.C {
		if !m.release() {
			return
		}
	}
}

// release gives every live mapping's pages back and reports whether any
// was live; with none, the loop ends (add starts another).
func (m *segmentMaps) release() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.live) == 0 {
		m.ticking = false
		return false
	}
	for _, b := range m.live {
		releaseMapping(b)
	}
	return true
}
