package keyfile_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/climatesearch/climatesearch/adapters/keyfile"
	"github.com/climatesearch/climatesearch/core"
)

const (
	acmeKey = "sk_live_acme_4f1c2e9b7d"
	ciKey   = "sk_live_ci_08a6b3d5e1"
	newKey  = "sk_live_new_77c0aa91f3"
)

func sha(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// writer writes the key file, each version with a later modification time
// so that every change is seen whatever the file system's time resolution.
type writer struct {
	t     *testing.T
	path  string
	mtime time.Time
}

func newWriter(t *testing.T) *writer {
	return &writer{t: t, path: filepath.Join(t.TempDir(), "api-keys"), mtime: time.Now().Add(-time.Hour)}
}

func (w *writer) write(content string) {
	w.t.Helper()
	if err := os.WriteFile(w.path, []byte(content), 0o600); err != nil {
		w.t.Fatal(err)
	}
	w.mtime = w.mtime.Add(time.Second)
	if err := os.Chtimes(w.path, w.mtime, w.mtime); err != nil {
		w.t.Fatal(err)
	}
}

// replace writes the file whole under another name and renames it over
// the path, as an operator's tooling should, with the next modification
// time.
func (w *writer) replace(content string) {
	w.t.Helper()
	tmp := w.path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		w.t.Fatal(err)
	}
	w.mtime = w.mtime.Add(time.Second)
	if err := os.Chtimes(tmp, w.mtime, w.mtime); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(tmp, w.path); err != nil {
		w.t.Fatal(err)
	}
}

func open(t *testing.T, w *writer, c *clock, log *zap.Logger) *keyfile.File {
	t.Helper()
	f, err := keyfile.Open(keyfile.Config{Path: w.path, Now: c.Now, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func verify(t *testing.T, f *keyfile.File, key string) core.KeyVerdict {
	t.Helper()
	v, err := f.Verify(context.Background(), key)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return v
}

func valid(name string) core.KeyVerdict {
	return core.KeyVerdict{Valid: true, Code: core.KeyValid, Name: name}
}

var notFound = core.KeyVerdict{Valid: false, Code: core.KeyNotFound}

func TestValidAndUnknownKeys(t *testing.T) {
	w := newWriter(t)
	w.write("\ufeff# climatesearch API keys\n" +
		"\n" +
		"acme     sha256:" + sha(acmeKey) + "\r\n" +
		"   # an indented comment\n" +
		"ci-robot\tsha256:" + strings.ToUpper(sha(ciKey)) + "   # rotated 2026-11\n")
	f := open(t, w, &clock{}, nil)
	if f.Len() != 2 {
		t.Errorf("%d keys, want 2", f.Len())
	}
	for key, want := range map[string]core.KeyVerdict{
		acmeKey:                  valid("acme"),
		ciKey:                    valid("ci-robot"),
		"sk_live_unknown":        notFound,
		"":                       notFound,
		"sha256:" + sha(acmeKey): notFound, // the hash is not the key
		acmeKey + " ":            notFound,
	} {
		if got := verify(t, f, key); got != want {
			t.Errorf("%q: %+v, want %+v", key, got, want)
		}
	}
	if f.Err() != nil {
		t.Errorf("Err: %v", f.Err())
	}
}

// Hash and Line write what the file expects, the same as sha256sum.
func TestHashAndLine(t *testing.T) {
	if got, want := keyfile.Hash("test"), "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"; got != want {
		t.Errorf("Hash(test) = %s, want %s", got, want)
	}
	w := newWriter(t)
	w.write(keyfile.Line("acme", acmeKey) + "\n")
	if got := verify(t, open(t, w, &clock{}, nil), acmeKey); got != valid("acme") {
		t.Errorf("%+v", got)
	}
}

func TestEmptyFile(t *testing.T) {
	w := newWriter(t)
	w.write("# no keys yet\n")
	core, logs := observer.New(zapcore.InfoLevel)
	f := open(t, w, &clock{}, zap.New(core))
	if f.Len() != 0 || verify(t, f, acmeKey) != notFound {
		t.Errorf("an empty file lets keys in")
	}
	if logs.FilterMessageSnippet("lists no keys").Len() != 1 {
		t.Errorf("no warning about an empty key file: %v", logs.All())
	}
}

func TestMalformedLines(t *testing.T) {
	good := "acme sha256:" + sha(acmeKey)
	for _, tc := range []struct {
		name    string
		content string
		line    int
		reason  string
	}{
		{"a key in clear", "# keys\n" + good + "\nbob sk_live_written_in_clear\n", 3, "never in clear"},
		{"one field", good + "\n\nsha256:" + sha(ciKey) + "\n", 3, "found 1 fields"},
		{"hash first", "sha256:" + sha(ciKey) + " ci\n", 1, "the name comes first"},
		{"three fields", "ci robot sha256:" + sha(ciKey) + "\n", 1, "found 3 fields"},
		{"short hash", "ci sha256:" + sha(ciKey)[:63] + "\n", 1, "63 hex digits"},
		{"not hex", "ci sha256:" + strings.Repeat("z", 64) + "\n", 1, "not hexadecimal"},
		{"other algorithm", "ci md5:" + sha(ciKey)[:32] + "\n", 1, "sha256:"},
		{"duplicate key", good + "\nacme-again sha256:" + sha(acmeKey) + "\n", 2, "same key as line 1"},
		{"long name", strings.Repeat("n", 129) + " sha256:" + sha(ciKey) + "\n", 1, "longer than 128"},
		{"not UTF-8", good + "\nci\xff sha256:" + sha(ciKey) + "\n", 2, "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWriter(t)
			w.write(tc.content)
			f, err := keyfile.Open(keyfile.Config{Path: w.path})
			if err == nil {
				t.Fatalf("Open accepted the file (%d keys)", f.Len())
			}
			var le *keyfile.LineError
			if !errors.As(err, &le) || le.Line != tc.line {
				t.Fatalf("error %v, want a LineError on line %d", err, tc.line)
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("line %d", tc.line)) || !strings.Contains(msg, tc.reason) || !strings.Contains(msg, w.path) {
				t.Errorf("error %q should name the file, line %d and say %q", msg, tc.line, tc.reason)
			}
			if core.KindOf(err) != core.KindInvalid {
				t.Errorf("kind %v, want KindInvalid", core.KindOf(err))
			}
			if strings.Contains(msg, "sk_live_written_in_clear") {
				t.Errorf("the error repeats a key written in clear: %s", msg)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-file")
	_, err := keyfile.Open(keyfile.Config{Path: path})
	if !errors.Is(err, fs.ErrNotExist) || core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of a missing file: %v", err)
	}
	if _, err := keyfile.Open(keyfile.Config{Path: " "}); core.KindOf(err) != core.KindInvalid {
		t.Errorf("Open without a path: %v", err)
	}
	if _, err := keyfile.Open(keyfile.Config{Path: t.TempDir()}); err == nil {
		t.Errorf("Open of a directory succeeded")
	}
}

// A changed file is read again, at most once per CheckInterval.
func TestFileChangedWhileRunning(t *testing.T) {
	w := newWriter(t)
	w.write("acme sha256:" + sha(acmeKey) + "\n")
	c := &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	core, logs := observer.New(zapcore.InfoLevel)
	f := open(t, w, c, zap.New(core))

	// acme's key revoked, a new one issued.
	w.write("# rotated\nnewco sha256:" + sha(newKey) + "\n")
	c.advance(999 * time.Millisecond)
	if got := verify(t, f, acmeKey); got != valid("acme") {
		t.Errorf("within the check interval: %+v, want the keys loaded before", got)
	}
	// The first look after a second sees the change; the next one, a
	// second later, finds the file unchanged since and reads it.
	c.advance(time.Millisecond)
	if got := verify(t, f, acmeKey); got != valid("acme") {
		t.Errorf("at the look that sees the change: %+v, want the keys loaded before", got)
	}
	c.advance(time.Second)
	if got := verify(t, f, acmeKey); got != notFound {
		t.Errorf("revoked key after two seconds: %+v", got)
	}
	if got := verify(t, f, newKey); got != valid("newco") {
		t.Errorf("new key after two seconds: %+v", got)
	}
	if logs.FilterMessage("API keys reloaded").Len() != 1 {
		t.Errorf("reload not logged once: %v", logs.All())
	}
	// Unchanged: not read again.
	c.advance(time.Hour)
	verify(t, f, newKey)
	if logs.FilterMessage("API keys reloaded").Len() != 1 {
		t.Errorf("an unchanged file was reloaded")
	}
	for _, e := range logs.All() {
		for _, v := range e.ContextMap() {
			if s := fmt.Sprint(v); strings.Contains(s, acmeKey) || strings.Contains(s, newKey) {
				t.Errorf("a log names a key: %v", e)
			}
		}
	}
}

// A new file renamed over the old one is seen even with the same size and
// modification time.
func TestAtomicReplaceIsSeen(t *testing.T) {
	w := newWriter(t)
	w.write("a sha256:" + sha(acmeKey) + "\n")
	c := &clock{}
	f := open(t, w, c, nil)
	info, err := os.Stat(w.path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := w.path + ".new"
	if err := os.WriteFile(tmp, []byte("b sha256:"+sha(ciKey)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, w.path); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Second)
	verify(t, f, ciKey)
	c.advance(time.Second)
	if got := verify(t, f, ciKey); got != valid("b") {
		t.Errorf("after the rename: %+v", got)
	}
}

// A change with a bad line keeps the keys in use, says why once, and is
// taken up when fixed.
func TestBadChangeKeepsPreviousKeys(t *testing.T) {
	w := newWriter(t)
	w.write("acme sha256:" + sha(acmeKey) + "\n")
	c := &clock{}
	core, logs := observer.New(zapcore.InfoLevel)
	f := open(t, w, c, zap.New(core))

	w.write("newco sha256:" + sha(newKey) + "\noops " + newKey + "\n")
	for range 5 {
		c.advance(time.Second)
		if got := verify(t, f, acmeKey); got != valid("acme") {
			t.Fatalf("after a bad change: %+v, want the keys loaded before", got)
		}
		if got := verify(t, f, newKey); got != notFound {
			t.Fatalf("a key of the refused change is accepted: %+v", got)
		}
	}
	err := f.Err()
	var le *keyfile.LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "1 keys loaded before stay in use") {
		t.Errorf("Err = %v, want line 2 and the keys kept", err)
	}
	refused := logs.FilterMessageSnippet("refused")
	if refused.Len() != 1 {
		t.Errorf("the refusal was logged %d times, want once", refused.Len())
	} else if s := fmt.Sprint(refused.All()[0].ContextMap()); !strings.Contains(s, "line 2") || strings.Contains(s, newKey) {
		t.Errorf("refusal log %s: want line 2, no key", s)
	}

	w.write("newco sha256:" + sha(newKey) + "\n")
	c.advance(time.Second)
	verify(t, f, newKey)
	c.advance(time.Second)
	if got := verify(t, f, newKey); got != valid("newco") {
		t.Errorf("after the fix: %+v", got)
	}
	if f.Err() != nil {
		t.Errorf("Err after the fix: %v", f.Err())
	}
}

func TestRemovedFileKeepsPreviousKeys(t *testing.T) {
	w := newWriter(t)
	w.write("acme sha256:" + sha(acmeKey) + "\n")
	c := &clock{}
	core, logs := observer.New(zapcore.InfoLevel)
	f := open(t, w, c, zap.New(core))
	if err := os.Remove(w.path); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.advance(time.Second)
		if got := verify(t, f, acmeKey); got != valid("acme") {
			t.Fatalf("after removal: %+v", got)
		}
	}
	if !errors.Is(f.Err(), fs.ErrNotExist) {
		t.Errorf("Err = %v", f.Err())
	}
	if n := logs.FilterMessageSnippet("cannot be read").Len(); n != 1 {
		t.Errorf("the missing file was logged %d times, want once", n)
	}
	w.write("ci sha256:" + sha(ciKey) + "\n")
	c.advance(time.Second)
	verify(t, f, ciKey)
	c.advance(time.Second)
	if got := verify(t, f, ciKey); got != valid("ci") || f.Err() != nil {
		t.Errorf("after the file came back: %+v, Err %v", got, f.Err())
	}
}

// Verifications go on while the file changes (run with -race).
func TestConcurrentVerifyWhileChanging(t *testing.T) {
	w := newWriter(t)
	w.write("acme sha256:" + sha(acmeKey) + "\n")
	c := &clock{}
	f := open(t, w, c, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if v := verify(t, f, acmeKey); v != valid("acme") {
					t.Errorf("%+v", v)
					return
				}
			}
		})
	}
	// Replaced whole, not rewritten in place: with the test's clock a whole
	// check interval can pass between two writes a millisecond apart, and
	// two files caught emptied by their truncations in the same tick of
	// the file system's clock (same size, same modification time) look
	// like one file that stayed so. With real time the looks are an
	// interval (a second) apart; TestHalfWrittenFileIsNotTakenUp covers
	// writes in place.
	for i := range 20 {
		w.replace(fmt.Sprintf("acme sha256:%s\nk%d sha256:%s\n", sha(acmeKey), i, sha(fmt.Sprint(i))))
		c.advance(time.Second)
		verify(t, f, "x")
	}
	close(stop)
	wg.Wait()
	c.advance(time.Second)
	verify(t, f, "19")
	c.advance(time.Second)
	if got := verify(t, f, "19"); got != valid("k19") {
		t.Errorf("last version: %+v", got)
	}
}

// A file caught while being rewritten in place (here: emptied, then
// written) never replaces the keys in use unless it stays so for an
// interval.
func TestHalfWrittenFileIsNotTakenUp(t *testing.T) {
	w := newWriter(t)
	w.write("acme sha256:" + sha(acmeKey) + "\n")
	c := &clock{}
	f := open(t, w, c, nil)
	w.write("") // truncated, the writer not done yet
	c.advance(time.Second)
	if got := verify(t, f, acmeKey); got != valid("acme") {
		t.Fatalf("with the file emptied: %+v", got)
	}
	w.write("acme sha256:" + sha(acmeKey) + "\nci sha256:" + sha(ciKey) + "\n")
	c.advance(time.Second)
	if got := verify(t, f, acmeKey); got != valid("acme") {
		t.Fatalf("after the write: %+v", got)
	}
	c.advance(time.Second)
	if got := verify(t, f, ciKey); got != valid("ci") || verify(t, f, acmeKey) != valid("acme") {
		t.Errorf("the written file was not taken up: %+v", got)
	}
}
