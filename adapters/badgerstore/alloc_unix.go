//go:build !windows

package badgerstore

import (
	"os"
	"syscall"
)

// allocated is the disk space a file takes (its blocks), its size when
// the system does not say.
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
