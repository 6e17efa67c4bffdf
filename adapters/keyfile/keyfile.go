// Package keyfile implements ports.KeyVerifier with a file of API keys, for
// self-hosters who want keys without a key service (SERVICE_API_KEYS_FILE).
//
// The file holds one key a line, as its owner's name and the SHA-256 of the
// key, never the key itself:
//
//	# climatesearch API keys: name sha256:<hex of SHA-256(key)>
//	acme     sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//	ci-robot sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752  # rotated 2026-11
//
// Blank lines and lines starting with # are skipped; a # after the two
// fields starts a comment. The hash of a key is what
// `printf %s "$KEY" | sha256sum` prints (Line and Hash compute it too).
//
// Open refuses a file with a bad line, naming the line (the process does not
// start). While running, the file is looked at (one stat) at most once per
// CheckInterval and only when a key is verified. A change of its
// modification time, size or identity (a new file renamed over it) is read
// at the next look that finds the file still the same, so a change is taken
// up one to two intervals after it is written, and a file caught half
// written is not taken up. A change that does not parse, or a file gone
// missing, leaves the keys in use as they were; the reason is logged once
// and kept in Err. Replacing the file atomically (write a new one, rename it
// over the old) is still the safe way to edit it.
//
// A key is found by comparing its SHA-256 with every listed hash in
// constant time: how long a lookup takes says nothing of the hashes.
package keyfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// DefaultCheckInterval is how often, at most, the file is looked at when
// Config.CheckInterval is zero.
const DefaultCheckInterval = time.Second

// HashPrefix starts every hash in the file.
const HashPrefix = "sha256:"

// MaxFileBytes bounds the file (about 150,000 keys).
const MaxFileBytes = 16 << 20

// MaxNameLen bounds a name.
const MaxNameLen = 128

// Config says where the file is.
type Config struct {
	// Path is the key file (SERVICE_API_KEYS_FILE). Required.
	Path string
	// CheckInterval is how often, at most, the file is looked at for a
	// change; 0 means DefaultCheckInterval.
	CheckInterval time.Duration
	// Log receives the reloads and the refused changes (never a key);
	// nil means no logs.
	Log *zap.Logger
	// Now is the clock of CheckInterval; nil means time.Now.
	Now func() time.Time
}

// File verifies keys against a key file. Safe for concurrent use.
type File struct {
	path     string
	interval time.Duration
	log      *zap.Logger
	now      func() time.Time

	keys atomic.Pointer[keySet]

	// check is held while the file is looked at; a Verify finding it held
	// goes on with the keys in use.
	check     sync.Mutex
	lastCheck time.Time
	loaded    os.FileInfo // the version of the file the keys in use come from
	refused   os.FileInfo // the last version refused (nil when none)
	pending   os.FileInfo // a changed version seen once, read if seen again
	err       atomic.Pointer[error]
}

var _ ports.KeyVerifier = (*File)(nil)

type keySet struct {
	sums  [][sha256.Size]byte
	names []string
}

// LineError is a line of the file that cannot be read. Its message names
// the line and what is wrong, never the line's text (it may hold a key
// written in clear by mistake).
type LineError struct {
	Path   string
	Line   int
	Reason string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("key file %s, line %d: %s", e.Path, e.Line, e.Reason)
}

// Open reads the key file. A missing or unreadable file, or a bad line, is
// an error of kind core.KindInvalid (wrapping a *LineError for a bad line,
// the os error otherwise).
func Open(cfg Config) (*File, error) {
	path := strings.TrimSpace(cfg.Path)
	if path == "" {
		return nil, core.Invalidf("key file: no path given")
	}
	if cfg.CheckInterval < 0 {
		return nil, core.Invalidf("key file: check interval %v is negative", cfg.CheckInterval)
	}
	f := &File{path: path, interval: cfg.CheckInterval, log: cfg.Log, now: cfg.Now}
	if f.interval == 0 {
		f.interval = DefaultCheckInterval
	}
	if f.log == nil {
		f.log = zap.NewNop()
	}
	if f.now == nil {
		f.now = time.Now
	}
	set, info, err := f.read()
	if err != nil {
		return nil, invalid(err)
	}
	f.keys.Store(set)
	f.loaded = info
	f.lastCheck = f.now()
	if len(set.sums) == 0 {
		f.log.Warn("the key file lists no keys: every API key is refused", zap.String("path", path))
	} else {
		f.log.Info("API keys loaded", zap.String("path", path), zap.Int("keys", len(set.sums)))
	}
	return f, nil
}

func invalid(err error) error {
	return &core.Error{Kind: core.KindInvalid, Msg: err.Error(), Err: err}
}

// Verify implements ports.KeyVerifier: VALID with the owner's name for a
// listed key, NOT_FOUND otherwise. It never fails: a file that cannot be
// read again leaves the keys in use unchanged.
func (f *File) Verify(_ context.Context, key string) (core.KeyVerdict, error) {
	f.maybeReload()
	if key == "" {
		return core.KeyVerdict{Valid: false, Code: core.KeyNotFound}, nil
	}
	if name, ok := f.keys.Load().lookup(sha256.Sum256([]byte(key))); ok {
		return core.KeyVerdict{Valid: true, Code: core.KeyValid, Name: name}, nil
	}
	return core.KeyVerdict{Valid: false, Code: core.KeyNotFound}, nil
}

// lookup compares sum with every hash, in constant time and without
// stopping at a match.
func (s *keySet) lookup(sum [sha256.Size]byte) (string, bool) {
	found, at := 0, 0
	for i := range s.sums {
		eq := subtle.ConstantTimeCompare(s.sums[i][:], sum[:])
		at = subtle.ConstantTimeSelect(eq, i, at)
		found |= eq
	}
	if found == 0 {
		return "", false
	}
	return s.names[at], true
}

// Len is the number of keys in use.
func (f *File) Len() int { return len(f.keys.Load().sums) }

// Path is the key file.
func (f *File) Path() string { return f.path }

// Err says why the keys in use are not the file's current content (a
// change that does not parse, a file gone missing); nil when they are.
func (f *File) Err() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *File) setErr(err error) {
	if err == nil {
		f.err.Store(nil)
		return
	}
	f.err.Store(&err)
}

// maybeReload looks at the file when CheckInterval has passed since the
// last look, and reads it again when it changed and then stayed the same
// for one more look: a file caught while being written (truncated, half
// written) is not taken up unless it stays so for a whole interval.
func (f *File) maybeReload() {
	if !f.check.TryLock() {
		return // another Verify is looking
	}
	defer f.check.Unlock()
	now := f.now()
	if d := now.Sub(f.lastCheck); d >= 0 && d < f.interval {
		return // looked recently (a clock gone back looks again)
	}
	f.lastCheck = now

	info, err := os.Stat(f.path)
	switch {
	case err != nil:
		if f.Err() == nil || f.refused != nil {
			f.log.Error("the key file cannot be read: the keys loaded before stay in use", zap.String("path", f.path), zap.Error(err))
		}
		f.refused, f.pending = nil, nil
		f.setErr(fmt.Errorf("key file %s: %w (the %d keys loaded before stay in use)", f.path, err, f.Len()))
		return
	case same(info, f.loaded):
		f.pending = nil
		if f.Err() != nil {
			f.log.Info("the key file is back as it was loaded", zap.String("path", f.path))
			f.refused = nil
			f.setErr(nil)
		}
		return
	case f.refused != nil && same(info, f.refused):
		return // refused and reported already
	case !same(info, f.pending):
		f.pending = info // changed: read it if it is the same at the next look
		return
	}

	f.pending = nil
	set, read, err := f.read()
	if read != nil && !same(read, info) {
		// Changed between the look and the read (a writer truncated it
		// again meanwhile): what was read may be half written. Wait for
		// it to stay the same for a whole interval, as for any change.
		f.pending = read
		return
	}
	if err != nil {
		if read == nil {
			read = info // it could not be opened: not again until it changes
		}
		f.refused = read
		f.setErr(fmt.Errorf("%w (the %d keys loaded before stay in use)", err, f.Len()))
		f.log.Error("the changed key file is refused: the keys loaded before stay in use",
			zap.String("path", f.path), zap.Error(err), zap.Int("keys", f.Len()))
		return
	}
	before := f.Len()
	f.keys.Store(set)
	f.loaded, f.refused = read, nil
	f.setErr(nil)
	f.log.Info("API keys reloaded", zap.String("path", f.path), zap.Int("keys", len(set.sums)), zap.Int("before", before))
}

// same says whether two looks at the file saw the same version.
func same(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// read reads and parses the file; info is the version read (also on a
// parse error, so that it is not parsed again until it changes).
func (f *File) read() (*keySet, os.FileInfo, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, nil, fmt.Errorf("key file: %w", err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("key file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, info, fmt.Errorf("key file %s is not a regular file", f.path)
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, info, fmt.Errorf("key file: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, info, fmt.Errorf("key file %s is larger than %d bytes", f.path, MaxFileBytes)
	}
	set, err := parse(f.path, data)
	return set, info, err
}

// parse reads the content of a key file; path only names it in errors.
func parse(path string, data []byte) (*keySet, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	set := &keySet{}
	lineOf := map[[sha256.Size]byte]int{}
	for n, line := range strings.Split(string(data), "\n") {
		n++
		bad := func(format string, args ...any) error {
			return &LineError{Path: path, Line: n, Reason: fmt.Sprintf(format, args...)}
		}
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !utf8.ValidString(line) {
			return nil, bad("not UTF-8 text")
		}
		fields := strings.Fields(line)
		if len(fields) > 2 && strings.HasPrefix(fields[2], "#") {
			fields = fields[:2]
		}
		if len(fields) != 2 {
			return nil, bad("want `name sha256:<64 hex digits>`, found %d fields", len(fields))
		}
		name, hash := fields[0], fields[1]
		if strings.HasPrefix(strings.ToLower(name), HashPrefix) {
			return nil, bad("the name comes first: `name sha256:<64 hex digits>`")
		}
		if len(name) > MaxNameLen {
			return nil, bad("the name is longer than %d bytes", MaxNameLen)
		}
		if strings.IndexFunc(name, unicode.IsControl) >= 0 {
			return nil, bad("the name contains control characters")
		}
		digits, ok := strings.CutPrefix(hash, HashPrefix)
		if !ok {
			return nil, bad("the key must be written as sha256:<hex of its SHA-256>, never in clear")
		}
		var sum [sha256.Size]byte
		if len(digits) != 2*sha256.Size {
			return nil, bad("the SHA-256 has %d hex digits, want %d", len(digits), 2*sha256.Size)
		}
		if _, err := hex.Decode(sum[:], []byte(digits)); err != nil {
			return nil, bad("the SHA-256 is not hexadecimal")
		}
		if first, dup := lineOf[sum]; dup {
			return nil, bad("the same key as line %d", first)
		}
		lineOf[sum] = n
		set.sums = append(set.sums, sum)
		set.names = append(set.names, name)
	}
	return set, nil
}

// Hash is how a key is written in the file: "sha256:<hex>".
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return HashPrefix + hex.EncodeToString(sum[:])
}

// Line is the file's line for a key and its owner's name.
func Line(name, key string) string { return name + " " + Hash(key) }
