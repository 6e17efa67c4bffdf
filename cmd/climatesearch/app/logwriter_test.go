package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/climatesearch/climatesearch/adapters/httpapi"
)

// recordingOut is a stderr stand-in that keeps every write(2) apart.
type recordingOut struct {
	mu     sync.Mutex
	writes [][]byte
}

func (o *recordingOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes = append(o.writes, bytes.Clone(p))
	return len(p), nil
}

func (o *recordingOut) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(bytes.Join(o.writes, nil))
}

// Lines written from many goroutines at once reach out whole, each
// goroutine's in its order, none lost or doubled, never split between two
// writes; the buffer's small limits here make it flush early and fill up
// often.
func TestLogWriterKeepsEveryLineWholeAndInOrder(t *testing.T) {
	out := &recordingOut{}
	w := newLogWriter(out, time.Millisecond, 256, 1024)
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				line := fmt.Sprintf("g%d %d %s\n", g, i, strings.Repeat("x", i%97))
				if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
					t.Errorf("Write: %d, %v", n, err)
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	for _, b := range out.writes {
		if len(b) == 0 || b[len(b)-1] != '\n' {
			t.Fatalf("a write to out does not end a line: %q", b)
		}
	}
	all := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, l := range all {
		var g, i int
		if _, err := fmt.Sscanf(l, "g%d %d", &g, &i); err != nil || g < 0 || g >= writers {
			t.Fatalf("line %q: %v", l, err)
		}
		if i != next[g] || l != fmt.Sprintf("g%d %d %s", g, i, strings.Repeat("x", i%97)) {
			t.Fatalf("writer %d: line %q, want its line %d", g, l, next[g])
		}
		next[g]++
	}
	if len(all) != writers*lines {
		t.Fatalf("%d lines out, want %d", len(all), writers*lines)
	}
}

// A line longer than the buffer's limit goes out whole too.
func TestLogWriterLineLargerThanTheBuffer(t *testing.T) {
	out := &recordingOut{}
	w := newLogWriter(out, time.Hour, 16, 64)
	big := strings.Repeat("y", 200) + "\n"
	for _, l := range []string{"a\n", big, "b\n"} {
		if _, err := w.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "a\n"+big+"b\n" {
		t.Fatalf("out %q", got)
	}
}

// waitFor polls until cond holds; the bound is a safety limit, not a
// measure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within the safety limit", what)
		}
	}
}

// The process logger: an info line reaches out without anyone flushing
// (the flusher writes it); a warning is written before Warn returns, after
// every info line logged before it; the lines keep zc's encoding (level,
// time, caller, logger name, fields) and its level.
func TestBufferedLoggerFlushesWarningsAtOnceAndInfoSoon(t *testing.T) {
	out := &recordingOut{}
	zc := zap.NewProductionConfig()
	zc.Sampling = nil
	zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	zc.Level = zap.NewAtomicLevelAt(zap.InfoLevel)
	log, err := buildLogger(zc, out)
	if err != nil {
		t.Fatal(err)
	}
	log = log.Named("t")
	log.Debug("below the level")
	log.Info("first", zap.Int("n", 1))
	waitFor(t, "the info line", func() bool { return strings.Contains(out.String(), `"first"`) })

	for i := range 100 {
		log.Info("access", zap.Int("i", i))
	}
	log.With(zap.String("k", "v")).Warn("warned")
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 102 {
		t.Fatalf("%d lines written when Warn returned, want the 101 info lines and the warning:\n%s", len(lines), out.String())
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %q", i, l)
		}
		if m["logger"] != "t" || m["ts"] == nil || !strings.HasPrefix(fmt.Sprint(m["caller"]), "app/logwriter_test.go:") {
			t.Fatalf("line %d lost zc's encoding: %q", i, l)
		}
		switch {
		case i == 0:
			if m["msg"] != "first" || m["level"] != "info" {
				t.Fatalf("line 0: %q", l)
			}
		case i <= 100:
			if m["msg"] != "access" || m["i"] != float64(i-1) {
				t.Fatalf("line %d out of order: %q", i, l)
			}
		default:
			if m["msg"] != "warned" || m["level"] != "warn" || m["k"] != "v" {
				t.Fatalf("the warning: %q", l)
			}
		}
	}
	if strings.Contains(out.String(), "below the level") {
		t.Fatal("a debug line was written at level info")
	}
	log.Info("last")
	if err := log.Sync(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "\"msg\":\"last\"}\n") {
		t.Fatalf("Sync did not write the last line: %q", out.String())
	}
}

// iso8601Time writes what zapcore.ISO8601TimeEncoder writes, whatever the
// order of the times and their locations.
func TestISO8601TimeAsZapWritesIt(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	ist := time.FixedZone("IST", 5*3600+1800)
	base := time.Date(2026, 11, 24, 8, 30, 59, 998_000_000, time.UTC)
	var times []time.Time
	for _, d := range []time.Duration{0, 400 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond, 2 * time.Millisecond, time.Hour, -time.Millisecond} {
		for _, loc := range []*time.Location{time.UTC, cet, ist, time.Local} {
			times = append(times, base.Add(d).In(loc))
		}
	}
	times = append(times, time.Now(), time.Now(), time.Unix(0, 0), time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC))
	for _, tm := range append(times, times...) {
		enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{TimeKey: "ts", EncodeTime: iso8601Time})
		want := zapcore.NewJSONEncoder(zapcore.EncoderConfig{TimeKey: "ts", EncodeTime: zapcore.ISO8601TimeEncoder})
		got, err := enc.EncodeEntry(zapcore.Entry{Time: tm}, nil)
		if err != nil {
			t.Fatal(err)
		}
		exp, _ := want.EncodeEntry(zapcore.Entry{Time: tm}, nil)
		if got.String() != exp.String() {
			t.Fatalf("%v: %s, zap writes %s", tm, got, exp)
		}
	}
}

// BenchmarkAccessLine writes the access line of a kept lookup (the fields
// httpapi.Observe logs) from parallel goroutines into a file, as zap's
// production logger did (one write(2) per line under a lock, with the
// caller), as NewLogger did (buffered, no caller on access lines, the
// time made once per millisecond) and as the binary does now (the same,
// the line made by accessLog rather than zap's encoder).
//
//	go test ./cmd/climatesearch/app/ -run '^$' -bench AccessLine -benchmem
func BenchmarkAccessLine(b *testing.B) {
	zc := zap.NewProductionConfig()
	zc.Sampling = nil
	zc.Level = zap.NewAtomicLevelAt(zap.InfoLevel)
	buffered := func(b *testing.B, path string) *zap.Logger {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		zc := zc
		zc.EncoderConfig.EncodeTime = iso8601Time
		log, err := buildLogger(zc, f)
		if err != nil {
			b.Fatal(err)
		}
		return log
	}
	for _, c := range []struct {
		name   string
		build  func(*testing.B, string) *zap.Logger
		direct bool // through accessLog, as the binary since section 18b
	}{
		{"synchronous", func(b *testing.B, path string) *zap.Logger {
			zc := zc
			zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
			zc.OutputPaths = []string{path}
			log, err := zc.Build()
			if err != nil {
				b.Fatal(err)
			}
			return log
		}, false},
		{"buffered", func(b *testing.B, path string) *zap.Logger {
			return buffered(b, path).WithOptions(zap.WithCaller(false))
		}, false},
		{"direct", buffered, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			log := c.build(b, filepath.Join(b.TempDir(), "stderr"))
			if c.direct {
				write := accessLog(log, "http")
				if write == nil {
					b.Fatal("no access writer")
				}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						write(httpapi.AccessLine{Method: "GET", Route: "/api/resources/:id", Path: "/api/resources/national:6000000000",
							Status: 200, Bytes: 2001, Took: 1292 * time.Nanosecond, Client: "127.0.0.1", RequestID: "114f78661ffc904b87dac0fc9b38a9ce"})
					}
				})
				_ = log.Sync()
				return
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if ce := log.Check(zap.InfoLevel, "http"); ce != nil {
						ce.Write(zap.String("method", "GET"), zap.String("route", "/api/resources/:id"), zap.String("path", "/api/resources/national:6000000000"),
							zap.Int("status", 200), zap.Int64("bytes", 2001), zap.Duration("took", 1292*time.Nanosecond),
							zap.String("client", "127.0.0.1"), zap.String("request_id", "114f78661ffc904b87dac0fc9b38a9ce"))
					}
				}
			})
			_ = log.Sync()
		})
	}
}
