package binary

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
)

// doubleA1A3 multiplies every A1-A3 Typical value of every resource by two.
// Doubling is exact in binary floating point, so the service's value can be
// compared with == against twice the original.
func doubleA1A3(t *testing.T) func([]map[string]any) []map[string]any {
	return func(rs []map[string]any) []map[string]any {
		for _, r := range rs {
			items, _ := r["DataItems"].([]any)
			for _, it := range items {
				item, _ := it.(map[string]any)
				vals, _ := item["DataValueItems"].([]any)
				for _, v := range vals {
					dv, _ := v.(map[string]any)
					if dv == nil || dv["DataModuleCode"] != "A1-A3 Typical" || dv["Value"] == nil {
						continue
					}
					n, ok := dv["Value"].(json.Number)
					if !ok {
						t.Fatalf("resource %s: A1-A3 Typical is %T, want a number", boverkettest.ResourceID(r), dv["Value"])
					}
					f, err := n.Float64()
					if err != nil {
						t.Fatal(err)
					}
					dv["Value"] = json.Number(strconv.FormatFloat(2*f, 'g', -1, 64))
				}
			}
		}
		return rs
	}
}

// TestKill9MidIngestLeavesAWholeRelease alternates the served release
// between the real one (A) and one with every A1-A3 value doubled (B) while
// ingests run back to back, kills the process with SIGKILL during an
// ingest, and restarts it on the same store with the publisher down. Every
// national resource must then hold release A's value, or every one release
// B's: an ingest is one transaction, so a crash never leaves a mix.
func TestKill9MidIngestLeavesAWholeRelease(t *testing.T) {
	t.Parallel()
	realExports(t)
	orig := realA1A3(t)
	// B is newer than A in both cultures, and its English export newer than
	// its Swedish one, as in A, so the English value wins in both.
	svB := boverkettest.MutateExport(t, sv0206, doubleA1A3(t), "02.08.000")
	enB := boverkettest.MutateExport(t, en0207, doubleA1A3(t), "02.09.000")
	doubled := mergeA1A3(a1a3Of(t, svB), a1a3Of(t, enB))
	if len(doubled) != len(orig) {
		t.Fatalf("release B has %d resources, A %d", len(doubled), len(orig))
	}
	distinct := 0
	for id, v := range orig {
		if doubled[id] != 2*v {
			t.Fatalf("national:%s: B holds %v, want 2 × %v", id, doubled[id], v)
		}
		if v != 0 {
			distinct++
		}
	}
	wbSVB := boverkettest.WorkbookFromExport(t, svB, "sv")
	wbENB := boverkettest.WorkbookFromExport(t, enB, "en")

	up := boverkettest.NewServer(t)
	var serveMu sync.Mutex
	serve := func(b bool) {
		serveMu.Lock()
		defer serveMu.Unlock()
		if b {
			up.SetJSON("sv", svB)
			up.SetJSON("en", enB)
			up.SetExcel("sv", wbSVB)
			up.SetExcel("en", wbENB)
		} else {
			up.SetJSON("sv", sv0206)
			up.SetJSON("en", en0207)
			up.SetExcel("sv", wbSV)
			up.SetExcel("en", wbEN)
		}
	}
	publisherUp := func(on bool) {
		status := 0
		if !on {
			status = http.StatusServiceUnavailable
		}
		up.FailJSON(status)
		up.FailExcel(status)
	}
	serve(false)

	dir := t.TempDir()
	env := baseEnv(dir)
	for k, v := range publisherEnv(up) {
		env[k] = v
	}

	const rounds = 3
	var killedB bool
	for round := 1; round <= rounds+1; round++ {
		var p *proc
		if round == 1 {
			// Empty store: no boot ingest, or the snapshot would load.
			env["SERVICE_BOOT_INGEST"] = "false"
			publisherUp(true)
			p = start(t, env)
			// The expected maps merge the cultures as the service is meant
			// to (the newer release's value wins): check that on one clean
			// ingest of each release before relying on it.
			for _, b := range []bool{false, true} {
				serve(b)
				status, body, err := post(context.Background(), p.URL+"/admin/ingest/run?catalog=national")
				if err != nil || status != http.StatusOK {
					t.Fatalf("clean ingest of release %s: %d %s %v", releaseName(b), status, truncate(body), err)
				}
				want := orig
				if b {
					want = doubled
				}
				checkReal(t, p.national(), want)
				if t.Failed() {
					t.Fatalf("after a clean ingest of release %s the service does not hold the expected values", releaseName(b))
				}
			}
		} else {
			// Restart on the crashed store with the publisher down: the
			// boot ingest fails and the service only reads.
			env["SERVICE_BOOT_INGEST"] = "true"
			publisherUp(false)
			p = start(t, env)
			if l := p.bootIngestDone(); l.str("msg") != "ingest failed" {
				t.Fatalf("round %d: boot ingest with the publisher down: %v", round, l)
			}
			heldB := checkWholeRelease(t, round, p.national(), orig, doubled, distinct)
			outcome := "it left no trace: the store holds the last answered release"
			if heldB == killedB {
				outcome = "it had committed before the kill"
			}
			t.Logf("round %d: store holds release %s; of the killed ingest of round %d, %s", round, releaseName(heldB), round-1, outcome)
			if round == rounds+1 {
				p.stop()
				break
			}
			publisherUp(true)
		}
		answered, killedAfter := crashDuringIngests(t, p, up, serve)
		// The loop serves A, B, A, ...: the killed ingest was of B when an
		// odd number of ingests had been answered.
		killedB = answered%2 == 1
		t.Logf("round %d: %d ingests answered, SIGKILL %v after the next one (of release %s) asked the publisher",
			round, answered, killedAfter, releaseName(killedB))
	}
}

func releaseName(b bool) string {
	if b {
		return "B"
	}
	return "A"
}

// crashDuringIngests runs ingests back to back, alternating the release
// served, and SIGKILLs the process at a random moment of an ingest.
func crashDuringIngests(t *testing.T, p *proc, up *boverkettest.Server, serve func(bool)) (int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu      sync.Mutex
		ok      int
		took    time.Duration // of the first applied ingest
		failure string
	)
	first := make(chan struct{})
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		for i := 0; ctx.Err() == nil; i++ {
			serve(i%2 == 1)
			t0 := time.Now()
			status, body, err := post(ctx, p.URL+"/admin/ingest/run?catalog=national")
			if err != nil {
				return // the process is gone
			}
			mu.Lock()
			if status != http.StatusOK {
				failure = strconv.Itoa(status) + " " + truncate(body)
				mu.Unlock()
				return
			}
			ok++
			if ok == 1 {
				took = time.Since(t0)
				close(first)
			}
			mu.Unlock()
		}
	}()
	select {
	case <-first:
	case <-loopDone:
		t.Fatalf("no ingest succeeded: %s", failure)
	case <-time.After(patience):
		t.Fatal("no ingest finished within the safety limit")
	}
	// Wait for the next ingest to ask the publisher, then kill within about
	// one ingest's length of that.
	n0 := up.Requests(boverkettest.JSONPathPrefix)
	for up.Requests(boverkettest.JSONPathPrefix) == n0 {
		select {
		case <-loopDone:
			t.Fatalf("the ingest loop stopped: %s", failure)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	d := took
	mu.Unlock()
	delay := rand.N(d + time.Millisecond)
	time.Sleep(delay)
	p.kill9()
	cancel()
	<-loopDone
	mu.Lock()
	defer mu.Unlock()
	if failure != "" {
		t.Fatalf("an ingest failed before the kill: %s", failure)
	}
	return ok, delay
}

// checkWholeRelease requires every national resource to hold release A's
// value or every one release B's.
// It reports whether the store holds B.
func checkWholeRelease(t *testing.T, round int, got map[string]resource, a, b map[string]float64, distinct int) bool {
	t.Helper()
	if len(got) != len(a) {
		t.Errorf("round %d: %d national resources after the crash, want %d", round, len(got), len(a))
	}
	var inA, inB, other []string
	for id, wa := range a {
		r, ok := got[id]
		if !ok || r.A1A3 == nil {
			other = append(other, id+"=missing")
			continue
		}
		switch v := *r.A1A3; {
		case wa == b[id]:
			if v != wa {
				other = append(other, id+"="+strconv.FormatFloat(v, 'g', -1, 64))
			}
		case v == wa:
			inA = append(inA, id)
		case v == b[id]:
			inB = append(inB, id)
		default:
			other = append(other, id+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	t.Logf("round %d: after the crash %d resources hold A's value, %d B's, %d neither", round, len(inA), len(inB), len(other))
	if len(inA) > 0 && len(inB) > 0 {
		t.Errorf("round %d: a mix of releases after the crash: %d resources hold A's value (e.g. %v), %d B's (e.g. %v)",
			round, len(inA), head(inA), len(inB), head(inB))
	}
	if len(other) > 0 {
		t.Errorf("round %d: %d resources hold neither release's value: %v", round, len(other), head(other))
	}
	if len(inA)+len(inB) != distinct {
		t.Errorf("round %d: %d resources classified, want %d", round, len(inA)+len(inB), distinct)
	}
	return len(inB) > len(inA)
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}
