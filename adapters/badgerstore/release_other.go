//go:build !linux

package badgerstore

// releaseVlog is Linux's (MADV_PAGEOUT); elsewhere the kernel alone
// decides what of the mapped value log stays resident.
func releaseVlog(string) (bool, error) { return false, nil }
