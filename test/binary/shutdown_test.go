package binary

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
)

// TestSignalsStopCleanly: SIGTERM and SIGINT end the process with exit 0
// and one "shutting down" line naming the signal.
func TestSignalsStopCleanly(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			up := publisher(t)
			env := baseEnv(t.TempDir())
			for k, v := range publisherEnv(up) {
				env[k] = v
			}
			p := start(t, env)
			p.bootIngestDone()
			p.signal(sig)
			if code := p.wait(); code != 0 {
				t.Fatalf("exit code after %v = %d, want 0", sig, code)
			}
			checkShutdownLog(t, p, sig)
		})
	}
}

func checkShutdownLog(t *testing.T, p *proc, sig os.Signal) {
	t.Helper()
	lines, _ := p.Stderr.snapshot()
	n := 0
	for _, l := range decodeLines(lines) {
		if l.str("msg") == "shutting down" {
			n++
			if l.str("signal") != sig.String() {
				t.Errorf("shutdown line names signal %q, want %q", l.str("signal"), sig.String())
			}
		}
		if l.str("level") == "error" || l.str("level") == "fatal" {
			t.Errorf("%s line logged: %s %q: %s", l.str("level"), l.str("logger"), l.str("msg"), l.str("error"))
		}
	}
	if n != 1 {
		t.Errorf("%d \"shutting down\" lines, want 1\nstderr:\n%s", n, tail(p.Stderr.String(), 30))
	}
	for i, s := range lines {
		var l map[string]any
		if json.Unmarshal([]byte(s), &l) != nil {
			t.Errorf("stderr line %d is not JSON despite SERVICE_LOG_FORMAT=json: %q", i+1, s)
		}
	}
}

// TestSIGTERMDrainsInFlightRequest: a request in flight when SIGTERM
// arrives gets its whole answer before the process exits 0.
//
// The request is POST /admin/ingest/run against a publisher that never
// answers, so it stays in the handler for two upstream timeouts (the JSON,
// then the workbooks) before the empty store gets the demo snapshot. The
// signal is sent once the stand-in has seen the request's first upstream
// call, i.e. while the handler is running.
func TestSIGTERMDrainsInFlightRequest(t *testing.T) {
	t.Parallel()
	up := boverkettest.NewServer(t)
	up.Hang(true)
	env := baseEnv(t.TempDir())
	for k, v := range publisherEnv(up) {
		env[k] = v
	}
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_INGEST_TIMEOUT"] = "2s"
	p := start(t, env)

	type answer struct {
		status int
		body   []byte
		err    error
	}
	ch := make(chan answer, 1)
	go func() {
		st, body, err := post(context.Background(), p.URL+"/admin/ingest/run?catalog=national")
		ch <- answer{st, body, err}
	}()
	deadline := time.Now().Add(patience)
	for up.Requests(boverkettest.JSONPathPrefix) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the ingest request never reached the publisher")
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.signal(syscall.SIGTERM)

	var a answer
	select {
	case a = <-ch:
	case <-time.After(patience):
		t.Fatal("the in-flight request never completed")
	}
	if a.err != nil {
		t.Fatalf("the in-flight request got no complete answer: %v", a.err)
	}
	var res struct {
		Origin   string `json:"origin"`
		Upserted int    `json:"upserted"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(a.body, &res); err != nil {
		t.Fatalf("answer %d is not complete JSON: %v: %q", a.status, err, truncate(a.body))
	}
	// The store was empty, so both sources timing out loads the snapshot.
	if a.status != http.StatusOK || res.Origin != "fixture" || res.Upserted != 230 {
		t.Errorf("in-flight ingest answered %d %s, want 200 with the demo snapshot", a.status, truncate(a.body))
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d, want 0", code)
	}
	checkShutdownLog(t, p, syscall.SIGTERM)
}

// TestSIGTERMDuringBootIngest: a signal while the boot ingest waits on a
// publisher that never answers stops the process at once (the upstream
// timeout is ten minutes, far beyond the test's patience) with exit 0, and
// the cancelled ingest is not reported as a failure: no error lines, no
// catalog.unreachable or ingest.failed events for operators to chase.
func TestSIGTERMDuringBootIngest(t *testing.T) {
	t.Parallel()
	up := boverkettest.NewServer(t)
	up.Hang(true)
	env := baseEnv(t.TempDir())
	for k, v := range publisherEnv(up) {
		env[k] = v
	}
	env["SERVICE_INGEST_TIMEOUT"] = "10m"
	env["SERVICE_INGEST_INTERVAL"] = "1h"
	p := startAlive(t, env) // not ready until the boot ingest ends
	deadline := time.Now().Add(patience)
	for up.Requests(boverkettest.JSONPathPrefix) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the boot ingest never reached the publisher")
		}
		time.Sleep(5 * time.Millisecond)
	}
	notReadyDuringBootIngest(t, p)
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d, want 0", code)
	}
	checkShutdownLog(t, p, syscall.SIGTERM)
	lines, _ := p.Stderr.snapshot()
	for _, l := range decodeLines(lines) {
		if l.str("msg") == "event" && (l.str("type") == "catalog.unreachable" || l.str("type") == "ingest.failed") {
			t.Errorf("shutting down published a %s event: %s", l.str("type"), l.str("error"))
		}
	}
}
