package badgerstore

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// releaseVlog asks the kernel to reclaim the pages of the value-log files
// mapped into this process (MADV_PAGEOUT, Linux 5.4 and later) and
// reports whether it could. Badger v4 maps every value-log file and writes
// values through the mapping, so every value written stayed resident in
// the process: about 1.1 kB per resource, 1.2 GB at a million resources,
// half the service's RSS. Badger v1's FileIO mode, which avoided that, is
// gone. Reclaimed pages are read again from the file on their next use, so
// a resource read after a release (not from the decoded cache) may wait on
// the disk once.
//
// MADV_PAGEOUT never changes what memory holds: clean file pages are
// dropped, dirty ones written back first, and anonymous ones swapped out
// or left alone. So the mappings are read from /proc/self/maps without
// holding badger still; a range that badger unmapped and the Go runtime
// reused in between costs at most a swap-out, never data (MADV_DONTNEED,
// which only unmaps, would zero an anonymous range).
func releaseVlog(dir string) (bool, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	prefix := dir + string(os.PathSeparator)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address perms offset dev inode pathname
		line := sc.Bytes()
		i := bytes.Index(line, []byte(prefix)) // the path ends the line
		if i < 0 || !bytes.HasSuffix(line, []byte(".vlog")) {
			continue
		}
		start, end, ok := mapRange(line)
		if !ok {
			continue
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_PAGEOUT)
		switch {
		case errno == unix.EINVAL:
			return false, nil // a kernel before 5.4
		case errno != 0 && errno != unix.ENOMEM: // ENOMEM: unmapped meanwhile
			return true, errno
		}
	}
	return true, sc.Err()
}

// mapRange parses the "start-end" address range of a /proc/self/maps line.
func mapRange(line []byte) (start, end uintptr, ok bool) {
	addr, _, _ := bytes.Cut(line, []byte(" "))
	a, b, found := bytes.Cut(addr, []byte("-"))
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(string(a), 16, 64)
	e, err2 := strconv.ParseUint(string(b), 16, 64)
	if errors.Join(err1, err2) != nil || e <= s {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}
