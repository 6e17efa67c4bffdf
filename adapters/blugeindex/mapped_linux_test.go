package blugeindex

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"
)

// TestSegmentPagesAreGivenBack: the pages of the segment files that
// searches read stay resident only until the next release; the answers
// after a release are those before it, read again from the page cache;
// and a closed index leaves no segment mapped and no release loop.
func TestSegmentPagesAreGivenBack(t *testing.T) {
	defer func(d time.Duration) { segmentReleaseEvery = d }(segmentReleaseEvery)
	segmentReleaseEvery = time.Hour // released by hand below, then by the loop

	ctx := context.Background()
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Resume(ctx, ""); err != nil {
		t.Fatal(err)
	}
	rs := synthResources(t, 0, 20_000)
	for i := 0; i < len(rs); i += 5_000 {
		if err := x.Upsert(ctx, rs[i:i+5_000]); err != nil {
			t.Fatal(err)
		}
	}
	golden := loadGolden(t)
	want := answers(t, x, golden)
	before := residentSegments(t, dir)
	if before < 1<<20 {
		t.Fatalf("the test needs searches to leave segment pages resident: %d kB", before>>10)
	}

	if !x.maps.release() {
		t.Fatal("no segment was mapped")
	}
	if after := residentSegments(t, dir); after > before/8 {
		t.Fatalf("after a release %d of %d kB of the segments stay resident", after>>10, before>>10)
	}
	if got := answers(t, x, golden); !slices.Equal(got, want) {
		t.Fatal("the answers after a release differ")
	}

	// The loop releases on its own, every segmentReleaseEvery.
	x.maps.mu.Lock()
	segmentReleaseEvery = 20 * time.Millisecond
	x.maps.ticking = false // the running loop waits an hour; start another
	x.maps.mu.Unlock()
	if err := x.Upsert(ctx, rs[:10]); err != nil { // a new segment starts it
		t.Fatal(err)
	}
	_ = answers(t, x, golden)
	var kept int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if kept = residentSegments(t, dir); kept <= before/8 {
			break
		}
	}
	if kept > before/8 {
		t.Fatalf("the loop left %d of %d kB resident", kept>>10, before>>10)
	}

	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if n := mappedSegments(t, dir); n != 0 {
		t.Fatalf("%d segment files still mapped after Close", n)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		x.maps.mu.Lock()
		ticking, live := x.maps.ticking, len(x.maps.live)
		x.maps.mu.Unlock()
		if live != 0 {
			t.Fatalf("%d mappings still registered after Close", live)
		}
		if !ticking {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the release loop still runs after Close")
		}
	}
}

// residentSegments is the resident size of this process's mappings of
// segment files under dir; mappedSegments counts those mappings.
func residentSegments(t *testing.T, dir string) int64 {
	total, _ := segmentMappings(t, dir)
	return total
}

func mappedSegments(t *testing.T, dir string) int {
	_, n := segmentMappings(t, dir)
	return n
}

var mappingRange = regexp.MustCompile(`^[0-9a-f]+-[0-9a-f]+$`)

func segmentMappings(t *testing.T, dir string) (resident int64, n int) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		// A mapping's first line: "start-end perms offset dev inode [path]".
		if fields := bytes.Fields(line); len(fields) >= 5 && mappingRange.Match(fields[0]) {
			in = len(fields) >= 6 && bytes.HasPrefix(fields[5], []byte(dir+"/")) && bytes.HasSuffix(fields[5], []byte(".seg"))
			if in {
				n++
			}
			continue
		}
		if in && bytes.HasPrefix(line, []byte("Rss:")) {
			var kb int64
			if _, err := fmt.Sscanf(string(line), "Rss: %d kB", &kb); err != nil {
				t.Fatal(err)
			}
			resident += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return resident, n
}
