//go:build windows

package badgerstore

import "os"

// allocated is the file's size: Windows does not report its blocks here.
func allocated(fi os.FileInfo) int64 { return fi.Size() }
