// Package pgtest runs throwaway PostgreSQL clusters for tests: Debian's
// postgresql package (binaries under /usr/lib/postgresql/<version>/bin),
// initdb'd in a temporary directory, listening on a free loopback port
// and on a unix socket in that directory, with fsync off.
//
// Shared returns one cluster per test process, started on first use; a
// package that uses it stops it at the end with
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Start gives a test a cluster of its own, which the test may Stop and
// Start again (on the same port and data). NewDB creates a fresh database
// per test. With CLIMATESEARCH_TEST_PG set to the URL of a running server
// (a superuser's, or a role allowed to create databases), Shared uses that
// server instead of starting one; Start always starts its own.
//
// When PostgreSQL is not installed the tests fail, naming the package to
// install; they never skip.
//
// initdb and postgres refuse to run as root: when the tests run as root,
// the cluster runs as the Debian package's "postgres" user (the directory
// is handed to it), through the credentials of the child process.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable that points Shared at a running server.
const EnvURL = "CLIMATESEARCH_TEST_PG"

// Cluster is one PostgreSQL server for tests.
type Cluster struct {
	adminURL string // the "postgres" database, as the superuser

	// Set for a cluster this package started; empty for an external one.
	bin  string
	dir  string // holds data/, the socket and postgres.log
	port int
	cred *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has exited
}

var dbSeq atomic.Int64

// binDir returns the newest installed PostgreSQL's bin directory.
func binDir() (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
		return "", errors.New("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): " +
			"install Debian's package with `apt-get install postgresql` (test/suite.sh does)")
	}
	sort.Slice(found, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(found[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(found[j]))))
		return vi > vj
	})
	return filepath.Dir(found[0]), nil
}

// freePort returns a loopback TCP port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// NewCluster initdb's and starts a cluster in a new temporary directory.
// Destroy stops it and removes the directory.
func NewCluster() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir}
	if err := c.init(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if c.port, err = freePort(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c.adminURL = c.URL("postgres")
	if err := c.Start(); err != nil {
		c.Destroy()
		return nil, err
	}
	return c, nil
}

// init runs initdb, as the postgres user when this process is root.
func (c *Cluster) init() error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("pgtest: running as root, and there is no postgres user to run PostgreSQL as (Debian's postgresql package creates it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return err
		}
	}
	if err := os.Chmod(c.dir, 0o700); err != nil {
		return err
	}
	cmd := c.command("initdb", "-D", filepath.Join(c.dir, "data"), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	return nil
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// The server dies with this process, whatever happens to it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: c.cred}
	return cmd
}

// URL returns the URL of database db on the cluster, as the superuser.
func (c *Cluster) URL(db string) string {
	if c.bin == "" {
		u, err := url.Parse(c.adminURL)
		if err != nil {
			return c.adminURL
		}
		u.Path = "/" + db
		return u.String()
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// Port is the cluster's TCP port on 127.0.0.1 (0 for an external server).
func (c *Cluster) Port() int { return c.port }

// Start starts the server (again, after Stop) and waits until it accepts
// connections.
func (c *Cluster) Start() error {
	if c.bin == "" {
		return errors.New("pgtest: an external server (" + EnvURL + ") cannot be started")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		return errors.New("pgtest: cluster already running")
	}
	logf, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	cmd := c.command("postgres", "-D", filepath.Join(c.dir, "data"), "-p", strconv.Itoa(c.port),
		"-k", c.dir, "-c", "listen_addresses=127.0.0.1",
		// fsync off: a test cluster need not survive the machine, only
		// its processes (the OS keeps what was written). synchronous_commit
		// stays on: without it a commit may sit in PostgreSQL's own WAL
		// buffers, and a killed backend (the crash tests) loses it.
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB", "-c", "log_min_messages=warning")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig fires when the thread that started the child ends, so the
	// child is started and waited for on a thread kept for it.
	started := make(chan error, 1)
	exit := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(exit)
		defer logf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	c.cmd, c.exit = cmd, exit
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.adminURL)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return nil
		}
		select {
		case <-exit:
			c.cmd = nil
			return fmt.Errorf("pgtest: postgres exited at start: %s", c.tail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres did not accept connections within 60 s: %v; %s", err, c.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail returns the end of the server's log.
func (c *Cluster) tail() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Stop shuts the server down (fast: open sessions are ended) and waits for
// it to exit. Stopping a stopped cluster is a no-op.
func (c *Cluster) Stop() error {
	if c.bin == "" {
		return errors.New("pgtest: an external server (" + EnvURL + ") cannot be stopped")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exit:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exit
	}
	c.cmd = nil
	return nil
}

// Destroy stops the server and removes its directory.
func (c *Cluster) Destroy() {
	if c.bin == "" {
		return
	}
	_ = c.Stop()
	_ = os.RemoveAll(c.dir)
}

// Start gives t a cluster of its own, destroyed when t ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := NewCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Destroy)
	return c
}

// Exec runs sql on the cluster's postgres database as the superuser.
func (c *Cluster) Exec(ctx context.Context, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, c.adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// NewDB creates an empty database for t and returns its URL; the database
// is dropped (its sessions ended) when t ends.
func (c *Cluster) NewDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0`); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			// The cluster may be stopped by the test itself.
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.URL(name)
}

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns the cluster of this test process: the server of
// CLIMATESEARCH_TEST_PG when set, otherwise one started on first use and
// destroyed by Main. Tests must not Stop it; a test that does needs Start.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			shared.c = &Cluster{adminURL: u}
			return
		}
		shared.c, shared.err = NewCluster()
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c
}

// Main runs the tests, then destroys the shared cluster if one was
// started, and returns the exit code for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.c != nil {
		shared.c.Destroy()
	}
	return code
}
