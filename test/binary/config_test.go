package binary

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInvalidConfigurationStopsAtStart: a bad setting ends the process
// before it does anything, with one line on stderr naming the setting and
// the bad value, and a non-zero exit.
func TestInvalidConfigurationStopsAtStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string // substrings of the one line
	}{
		{"addr", map[string]string{"SERVICE_ADDR": "nonsense"}, nil, []string{"SERVICE_ADDR", "nonsense"}},
		{"interval", map[string]string{"SERVICE_INGEST_INTERVAL": "banana"}, nil, []string{"SERVICE_INGEST_INTERVAL", "banana"}},
		{"upstream-url", map[string]string{"SERVICE_UPSTREAM_URL": "ftp://x"}, nil, []string{"SERVICE_UPSTREAM_URL", "ftp://x"}},
		{"log-format", map[string]string{"SERVICE_LOG_FORMAT": "xml"}, nil, []string{"SERVICE_LOG_FORMAT", "xml"}},
		{"start-timeout", map[string]string{"SERVICE_START_TIMEOUT": "0s"}, nil, []string{"SERVICE_START_TIMEOUT", "positive"}},
		// A bad flag value is named as the flag, not as the (valid)
		// environment variable it overrides.
		{"addr-flag", nil, []string{"-addr=nonsense"}, []string{"-addr", "nonsense"}},
		{"interval-flag", nil, []string{"-ingest-interval=banana"}, []string{"-ingest-interval", "banana"}},
		{"unknown-flag", nil, []string{"-no-such-flag=1"}, []string{"no-such-flag"}},
		{"stray-argument", nil, []string{"serve"}, []string{"serve"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			env := baseEnv(dir)
			env["SERVICE_ADDR"] = "127.0.0.1:1" // never reached: nothing may listen
			for k, v := range tc.env {
				env[k] = v
			}
			p := spawn(t, env, tc.args...)
			code := p.wait()
			if code == 0 {
				t.Errorf("exit code 0, want non-zero")
			}
			stderr := strings.TrimRight(p.Stderr.String(), "\n")
			lines := strings.Split(stderr, "\n")
			if stderr == "" || len(lines) != 1 {
				t.Fatalf("stderr has %d lines, want exactly one:\n%s", len(lines), tail(stderr, 12))
			}
			for _, w := range tc.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("stderr line %q does not mention %q", lines[0], w)
				}
			}
			if !strings.HasPrefix(lines[0], "climatesearch: ") {
				t.Errorf("stderr line %q does not start with the program name", lines[0])
			}
			if out := p.Stdout.String(); out != "" {
				t.Errorf("stdout is not empty: %q", out)
			}
		})
	}
}

// TestFlagsWinOverEnvironment: a bad value in the environment is no error
// when a flag overrides it.
func TestFlagsWinOverEnvironment(t *testing.T) {
	t.Parallel()
	up := downPublisher(t)
	env := baseEnv(t.TempDir())
	for k, v := range publisherEnv(up) {
		env[k] = v
	}
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_ADDR"] = "bad"
	env["SERVICE_LOG_FORMAT"] = "xml"
	env["SERVICE_INGEST_INTERVAL"] = "banana"
	p := startOpt(t, true, env, "-log-format=json", "-ingest-interval=0")
	resp, err := client.Get(p.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz = %s", resp.Status)
	}
	// The flag's address is the one listened on, and the flag's log format
	// is the one used.
	l, _ := p.waitLog(0, `"listening"`, func(l logLine) bool { return l.str("msg") == "listening" })
	if l.str("addr") != p.Addr {
		t.Errorf("listening on %q, want the -addr value %q", l.str("addr"), p.Addr)
	}
	p.stop()
}

// TestSelfHostedBuildIgnoresHostedSettings: the default binary has no
// guard; given hosted-only settings it says once that it ignores them and
// /api stays open.
func TestSelfHostedBuildIgnoresHostedSettings(t *testing.T) {
	env := baseEnv(t.TempDir())
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_PAYMENT_SECRET"] = "0123456789abcdef0123456789abcdef-not-logged"
	env["SERVICE_UNKEY_ROOT_KEY"] = "unkey_root_not_logged"
	p := start(t, env)
	l, _ := p.waitLog(0, "the hosted-settings warning", func(l logLine) bool { return strings.Contains(l.str("msg"), "self-hosted build") })
	if msg := l.str("msg"); !strings.Contains(msg, "SERVICE_PAYMENT_SECRET") || !strings.Contains(msg, "SERVICE_UNKEY_ROOT_KEY") {
		t.Fatalf("warning %q does not name both settings", msg)
	}
	// No guard: credentials are ignored and nothing is charged.
	for _, auth := range []string{"", "Bearer sk_whatever", "Payment bm90LWEtY3JlZGVudGlhbA"} {
		req, _ := http.NewRequest(http.MethodGet, p.URL+"/api/resources", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("WWW-Authenticate") != "" || resp.Header.Get("Payment-Receipt") != "" {
			t.Fatalf("/api/resources with %q in the self-hosted build: %d %v", auth, resp.StatusCode, resp.Header)
		}
	}
	if resp, err := http.Get(p.URL + "/openapi.json"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Fatalf("/openapi.json in the self-hosted build: %d", resp.StatusCode)
		}
	}
	// Every line, the access lines of the requests above included, is
	// written once the process has stopped (info lines are buffered).
	p.stop()
	logs := p.Stderr.String()
	if strings.Contains(logs, "not-logged") || strings.Contains(logs, "unkey_root_not") {
		t.Fatalf("stderr shows a secret:\n%s", tail(logs, 20))
	}
	if n := strings.Count(logs, "self-hosted build"); n != 1 {
		t.Fatalf("the warning appears %d times", n)
	}
}

// TestMemoryLimit: SERVICE_MEMORY_LIMIT becomes the Go heap's soft limit,
// as the runtime reports it on /metrics (go_gc_gomemlimit_bytes), and a
// GOMEMLIMIT in the environment wins over it.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	up := downPublisher(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		want float64
	}{
		{"setting", map[string]string{"SERVICE_MEMORY_LIMIT": "768MiB"}, 768 << 20},
		{"environment wins", map[string]string{"SERVICE_MEMORY_LIMIT": "768MiB", "GOMEMLIMIT": "1GiB"}, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, set := os.LookupEnv("GOMEMLIMIT"); set && tc.env["GOMEMLIMIT"] == "" {
				t.Fatal("GOMEMLIMIT is set in the test's environment; it would win over the setting under test")
			}
			env := baseEnv(t.TempDir())
			for k, v := range publisherEnv(up) {
				env[k] = v
			}
			env["SERVICE_BOOT_INGEST"] = "false"
			for k, v := range tc.env {
				env[k] = v
			}
			p := start(t, env)
			defer p.stop()
			resp, err := client.Get(p.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			m := regexp.MustCompile(`(?m)^go_gc_gomemlimit_bytes (\S+)$`).FindSubmatch(body)
			if m == nil {
				t.Fatal("/metrics has no go_gc_gomemlimit_bytes")
			}
			if got, _ := strconv.ParseFloat(string(m[1]), 64); got != tc.want {
				t.Errorf("go_gc_gomemlimit_bytes = %s, want %.0f", m[1], tc.want)
			}
		})
	}
}
