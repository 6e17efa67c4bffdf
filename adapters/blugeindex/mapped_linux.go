package blugeindex

import "golang.org/x/sys/unix"

// releaseMapping drops b's pages from the process (MADV_DONTNEED). b maps
// a segment file read-only and shared, so its contents do not change: a
// later read maps the page again from the page cache (or the file), and a
// search reading b meanwhile reads the same bytes. The caller holds the
// mapping live (segmentMaps.mu). An error (none is expected for a live
// mapping) only leaves the pages resident.
func releaseMapping(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
