package binary

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/testbin"
)

func httpGet(t *testing.T, url string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestMetricsAndPprofListeners: the compiled binary serves /metrics on
// SERVICE_METRICS_ADDR (and then not on the main listener), pprof on
// SERVICE_PPROF_ADDR, bound to loopback when only a port is given, and
// writes the info access log line of every request with its request id
// (the id sent, echoed in the answer) and no admin token.
func TestMetricsAndPprofListeners(t *testing.T) {
	env := baseEnv(t.TempDir())
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_ADMIN_TOKEN"] = "binary-admin-token-0123456789"
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	pprofPort := freePort(t)
	env["SERVICE_METRICS_ADDR"] = metricsAddr
	env["SERVICE_PPROF_ADDR"] = fmt.Sprintf(":%d", pprofPort)
	p := start(t, env)

	status, h, body := httpGet(t, "http://"+metricsAddr+"/metrics")
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") || !strings.Contains(body, "climatesearch_http_requests_total") {
		t.Fatalf("/metrics on SERVICE_METRICS_ADDR: %d %s %.300s", status, h.Get("Content-Type"), body)
	}
	if status, _, _ := httpGet(t, p.URL+"/metrics"); status != http.StatusNotFound {
		t.Errorf("/metrics on the main listener with SERVICE_METRICS_ADDR set: %d, want 404", status)
	}
	if status, _, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", pprofPort)); status != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Fatalf("pprof: %d %.200s", status, body)
	}
	// Info lines are buffered (flushed within 100 ms): wait for it.
	l, _ := p.waitLog(0, `"pprof listening"`, func(l logLine) bool { return l.str("msg") == "pprof listening" })
	if bound := l.str("addr"); bound != fmt.Sprintf("127.0.0.1:%d", pprofPort) {
		t.Errorf("pprof bound to %q, want loopback 127.0.0.1:%d", bound, pprofPort)
	}

	status, h, _ = httpGet(t, p.URL+"/api/resources/national:6000000000", "X-Request-Id", "binary-req-42", "X-Admin-Token", env["SERVICE_ADMIN_TOKEN"])
	if h.Get("X-Request-Id") != "binary-req-42" {
		t.Errorf("X-Request-Id echoed %q", h.Get("X-Request-Id"))
	}
	// The access log line is written once the answer is; wait for it.
	var access logLine
	deadline := time.After(patience) // a safety bound, not a measure
	for access == nil {
		lines, ch := p.Stderr.snapshot()
		for _, l := range decodeLines(lines) {
			if l.str("msg") == "http" && l.str("request_id") == "binary-req-42" {
				access = l
			}
		}
		if access != nil {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no access log line for request binary-req-42:\n%s", tail(p.Stderr.String(), 20))
		}
	}
	if access == nil || access.str("level") != "info" || access.str("route") != "/api/resources/:id" || access["status"] != float64(status) ||
		access.str("method") != "GET" || access.str("client") != "127.0.0.1" || access["bytes"] == nil {
		t.Fatalf("access log line %v", access)
	}
	// Every line, the last requests' included, is written once the
	// process has stopped.
	p.stop()
	if strings.Contains(p.Stderr.String(), env["SERVICE_ADMIN_TOKEN"]) {
		t.Errorf("the admin token is in the log")
	}
}

// startAlive runs the binary on a free port and waits until /healthz
// answers 200 (it listens), not for readiness: for runs whose boot ingest
// is held back on purpose.
func startAlive(t *testing.T, env map[string]string) *proc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		e["SERVICE_ADDR"] = addr
		p := spawn(t, e)
		p.Addr, p.URL = addr, "http://"+addr
		err := testbin.WaitHealthy(p.URL, p.done, patience)
		if err == nil {
			return p
		}
		if p.exited() && strings.Contains(p.Stderr.String(), "address already in use") && attempt < 5 {
			continue
		}
		t.Fatalf("the service did not start: %v\nstderr:\n%s", err, tail(p.Stderr.String(), 40))
	}
}

// notReadyDuringBootIngest checks /readyz answers 503 saying the boot
// ingest runs, once the index has loaded.
func notReadyDuringBootIngest(t *testing.T, p *proc) {
	t.Helper()
	deadline := time.Now().Add(patience) // a safety bound, not a measure
	for {
		status, _, body := httpGet(t, p.URL+"/readyz")
		var rd core.Readiness
		if err := json.Unmarshal([]byte(body), &rd); err != nil {
			t.Fatalf("/readyz: %d %s", status, body)
		}
		if status == http.StatusOK {
			t.Fatalf("/readyz 200 while the boot ingest hangs: %s", body)
		}
		if len(rd.Loading) == 0 {
			if rd.Reason != "boot ingest running" || rd.BootIngest != core.BootIngestRunning {
				t.Fatalf("/readyz during the boot ingest: %d %s", status, body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index never loaded: %s", body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
