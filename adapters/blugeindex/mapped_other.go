//go:build !linux

package blugeindex

// releaseMapping is Linux's (MADV_DONTNEED); elsewhere the kernel alone
// decides what of the mapped segments stays resident.
func releaseMapping([]byte) {}
