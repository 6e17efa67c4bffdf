package badgerstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// TestWrittenValueLogIsNotKeptResident: values written through badger's
// mapped value log stay resident in the process until released; with the
// release, what writing leaves resident stays about releaseEvery, however
// much is written.
func TestWrittenValueLogIsNotKeptResident(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := context.Background()
	n := 0
	put := func(mib int) { // mib MiB of 2 kB vectors (1,024 half floats)
		t.Helper()
		for range mib / 2 {
			vs := make([]ports.StoredVector, 1000)
			for i := range vs {
				v := make([]float32, 1024)
				for j := range v {
					v[j] = float32(n+j) / 1e6
				}
				vs[i] = ports.StoredVector{Key: core.Key{Catalog: core.National, ID: strconv.Itoa(n)}, Hash: "h", Vec: v}
				n++
			}
			if err := s.PutVectors(ctx, "e", vs); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Without releases, what is written stays resident.
	s.noRelease.Store(true)
	put(64)
	if kept := residentVlog(t, s.dir); kept < 48<<20 {
		t.Fatalf("the test needs written pages to stay resident: %d MiB of 64", kept>>20)
	}

	s.noRelease.Store(false)
	put(128)
	var kept int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if kept = residentVlog(t, s.dir); kept <= releaseEvery+16<<20 {
			return
		}
	}
	if s.noRelease.Load() {
		t.Fatal("the kernel refused MADV_PAGEOUT (Linux 5.4 and later have it)")
	}
	t.Fatalf("after 192 MiB written, %d MiB of the value log stays resident (releases every %d MiB)", kept>>20, releaseEvery>>20)
}

// residentVlog is the resident size of this process's mappings of the
// value-log files under dir (/proc/self/smaps).
func residentVlog(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if _, _, ok := mapRange(line); ok { // a mapping's first line
			in = bytes.Contains(line, []byte(dir+"/")) && bytes.HasSuffix(line, []byte(".vlog"))
			continue
		}
		if in && bytes.HasPrefix(line, []byte("Rss:")) {
			var kb int64
			if _, err := fmt.Sscanf(string(line), "Rss: %d kB", &kb); err != nil {
				t.Fatal(err)
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// TestReadValueLogIsNotKeptResident: reading resources maps their values
// in as writing does (a rebuild of the text index reads every one); with
// reads counted, what a scan of 96 MiB leaves resident stays about
// releaseEvery.
func TestReadValueLogIsNotKeptResident(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := context.Background()
	s.noRelease.Store(true)                          // what writing leaves is released below, at once
	long := strings.Repeat("mineralullsskiva ", 400) // a 6.8 kB description
	for b := range 16 {                              // 16 batches of 6 MiB
		var puts []ports.StoredResource
		for i := range 900 {
			sr := full(core.National, fmt.Sprintf("r%02d-%03d", b, i))
			sr.Resource.DescriptionSV = long
			puts = append(puts, sr)
		}
		if err := s.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
			t.Fatal(err)
		}
	}
	s.noRelease.Store(false)
	s.release()
	if kept := residentVlog(t, s.dir); kept > 8<<20 {
		t.Fatalf("the test needs the written pages released first: %d MiB resident", kept>>20)
	}

	read := int64(0)
	if err := s.Scan(ctx, core.National, func(sr ports.StoredResource) error {
		read += int64(len(sr.Resource.DescriptionSV))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if read < 90<<20 {
		t.Fatalf("the scan read %d MiB, want 96", read>>20)
	}
	var kept int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if kept = residentVlog(t, s.dir); kept <= releaseEvery+16<<20 {
			return
		}
	}
	t.Fatalf("after reading %d MiB, %d MiB of the value log stays resident (releases every %d MiB)", read>>20, kept>>20, releaseEvery>>20)
}
