package testbin

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Helpers the tests that run the compiled binary share.

// SyncBuffer collects a process's output; safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FreeAddr returns a loopback address with a port free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// WaitHealthy polls base/healthz until it answers 200, the process exits
// (done closes) or patience runs out. The process is alive then; its search
// index may still be loading: tests that read data use WaitReady.
func WaitHealthy(base string, done <-chan struct{}, patience time.Duration) error {
	return waitOK(base+"/healthz", done, patience)
}

// WaitReady polls base/readyz until it answers 200 (every catalog is loaded
// into the search index, so reads answer), the process exits (done
// closes) or patience runs out.
func WaitReady(base string, done <-chan struct{}, patience time.Duration) error {
	return waitOK(base+"/readyz", done, patience)
}

func waitOK(url string, done <-chan struct{}, patience time.Duration) error {
	c := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			return errors.New("the process exited")
		default:
		}
		if resp, err := c.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("no 200 from " + url + " within the safety limit")
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
