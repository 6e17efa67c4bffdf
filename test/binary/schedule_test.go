package binary

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/core"
)

// nextIngest reads the persisted schedule of the national catalog from a
// stopped process's store (the running process holds Badger's lock).
func nextIngest(t *testing.T, dataDir string) core.CatalogMeta {
	t.Helper()
	st, err := badgerstore.Open(filepath.Join(dataDir, "badger"), nil)
	if err != nil {
		t.Fatalf("opening the stopped process's store: %v", err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	}()
	m, err := st.Meta(context.Background(), core.National)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// bootAndStop boots the binary, lets the scheduler persist its next run and
// stops it. After the boot ingest (when there is one) the scheduler writes
// the next run before it sleeps, which it does not log, so the process is
// given a moment past the boot ingest's last line; that wait is no
// assertion. Should SIGTERM still come first, the scheduler logs that
// reading the schedule failed (its context was cancelled) and the boot is
// repeated, so the test never reads a schedule that was not yet written.
func bootAndStop(t *testing.T, env map[string]string, bootIngest bool) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p := start(t, env)
		if bootIngest {
			p.bootIngestDone()
		}
		time.Sleep(300 * time.Millisecond)
		p.stop()
		raced := false
		lines, _ := p.Stderr.snapshot()
		for _, l := range decodeLines(lines) {
			if strings.HasPrefix(l.str("msg"), "reading the schedule failed") && strings.Contains(l.str("error"), "context canceled") {
				raced = true
			}
		}
		if !raced {
			return
		}
		if attempt == 3 {
			t.Fatal("SIGTERM overtook the scheduler's first write three times")
		}
		t.Logf("SIGTERM overtook the scheduler's first write; booting again")
	}
}

// TestSchedulePersistsAcrossRestarts: with a one-hour interval and a boot
// ingest, the first boot persists the next run one interval ahead; a
// restart keeps that phase instead of pushing the run out again.
func TestSchedulePersistsAcrossRestarts(t *testing.T) {
	t.Parallel()
	up := publisher(t)
	dir := t.TempDir()
	env := baseEnv(dir)
	for k, v := range publisherEnv(up) {
		env[k] = v
	}
	env["SERVICE_INGEST_INTERVAL"] = "1h"
	env["SERVICE_BOOT_INGEST"] = "true"

	before := time.Now()
	bootAndStop(t, env, true)
	after := time.Now()
	m1 := nextIngest(t, dir)
	if m1.NextIngest.IsZero() {
		t.Fatalf("no next ingest persisted after the first boot (meta %+v)", m1)
	}
	if m1.NextIngest.Before(before.Add(time.Hour).Add(-time.Second)) || m1.NextIngest.After(after.Add(time.Hour)) {
		t.Errorf("next ingest %v, want one hour after the boot (between %v and %v)",
			m1.NextIngest, before.Add(time.Hour), after.Add(time.Hour))
	}
	if m1.LastIngest.IsZero() {
		t.Errorf("the boot ingest left no last_ingest")
	}

	bootAndStop(t, env, true)
	m2 := nextIngest(t, dir)
	if !m2.NextIngest.Equal(m1.NextIngest) {
		t.Errorf("next ingest moved on restart: %v, then %v", m1.NextIngest, m2.NextIngest)
	}
	if !m2.LastIngest.After(m1.LastIngest) {
		t.Errorf("the second boot ingest did not run: last_ingest %v, then %v", m1.LastIngest, m2.LastIngest)
	}

	// A shorter interval pulls a schedule further away than one interval in.
	env["SERVICE_INGEST_INTERVAL"] = "30m"
	env["SERVICE_BOOT_INGEST"] = "false"
	before = time.Now()
	bootAndStop(t, env, false)
	after = time.Now()
	m3 := nextIngest(t, dir)
	if m3.NextIngest.Before(before.Add(30*time.Minute).Add(-time.Second)) || m3.NextIngest.After(after.Add(30*time.Minute)) {
		t.Errorf("after shortening the interval to 30m, next ingest %v, want 30m after the boot (between %v and %v)",
			m3.NextIngest, before.Add(30*time.Minute), after.Add(30*time.Minute))
	}
}
