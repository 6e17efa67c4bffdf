package testbin

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Proc is one run of the service binary started by a test.
type Proc struct {
	URL    string // http://127.0.0.1:port
	Addr   string // 127.0.0.1:port
	Cmd    *exec.Cmd
	Stderr *SyncBuffer
	// Done is closed when the process has exited; Code is then its exit
	// code.
	Done chan struct{}
	Code int
}

// Start runs bin in dir on a free loopback port (SERVICE_ADDR), with the
// test's environment less its SERVICE_ variables plus env, and waits until
// /readyz answers 200. The process is killed when the test ends, and its
// stderr logged when the test failed. A port taken between picking and
// listening is retried on another.
func Start(t testing.TB, bin, dir string, env map[string]string, patience time.Duration) *Proc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		p := &Proc{Addr: FreeAddr(t), Stderr: &SyncBuffer{}, Done: make(chan struct{})}
		p.URL = "http://" + p.Addr
		p.Cmd = exec.Command(bin)
		p.Cmd.Dir = dir
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "SERVICE_") {
				p.Cmd.Env = append(p.Cmd.Env, kv)
			}
		}
		for k, v := range env {
			p.Cmd.Env = append(p.Cmd.Env, k+"="+v)
		}
		p.Cmd.Env = append(p.Cmd.Env, "SERVICE_ADDR="+p.Addr)
		p.Cmd.Stderr = p.Stderr
		if err := p.Cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			_ = p.Cmd.Wait()
			p.Code = p.Cmd.ProcessState.ExitCode()
			close(p.Done)
		}()
		t.Cleanup(func() {
			if !p.Exited() {
				_ = p.Cmd.Process.Kill() // this test's own child, by its pid
				<-p.Done
			}
			if t.Failed() {
				t.Logf("stderr of the service:\n%s", Tail(p.Stderr.String(), 40))
			}
		})
		if err := WaitReady(p.URL, p.Done, patience); err != nil {
			if p.Exited() && strings.Contains(p.Stderr.String(), "address already in use") && attempt < 5 {
				continue
			}
			t.Fatalf("the service did not become ready: %v\n%s", err, Tail(p.Stderr.String(), 40))
		}
		return p
	}
}

// Exited tells whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.Done:
		return true
	default:
		return false
	}
}
