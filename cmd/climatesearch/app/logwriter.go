package app

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The process log is written to stderr through a buffer: an info line
// (the access line of every request above all) is copied into memory and
// written out by a background flusher within logFlushInterval, many lines
// per write(2); a warning or an error flushes the buffer and is written
// at once, in order, by the goroutine that logs it; so do logger.Sync
// (at the end of main) and zap's fatal and panic levels. Writing each
// access line with its own write(2), under zap's lock with the other
// requests waiting on it, cost a kept lookup about 5 µs of CPU over its
// 20 at warn (docs/PERFORMANCE.md section 18). What a crash that skips the
// flush (kill -9, an unrecovered panic, the OOM killer) loses: the info
// lines of at most the last logFlushInterval, at most about logFlushAt
// bytes of them while stderr keeps up (logBufferMax when its reader
// stalls); never a warning or an error.
const (
	// logFlushInterval bounds how long an info line waits in memory.
	logFlushInterval = 100 * time.Millisecond
	// logFlushAt is the buffered size at which the flusher writes without
	// waiting for the interval.
	logFlushAt = 64 << 10
	// logBufferMax is the most the buffer holds: a line that would not
	// fit makes its writer flush first, so a stalled reader of stderr
	// holds the service back as an unbuffered log would, instead of
	// growing its memory.
	logBufferMax = 1 << 20
)

// buildLogger builds zc's logger (its encoder, level, caller, stack
// traces) writing to out (stderr) through a logWriter.
func buildLogger(zc zap.Config, out io.Writer) (*zap.Logger, error) {
	w := newLogWriter(out, logFlushInterval, logFlushAt, logBufferMax)
	var enc zapcore.Encoder
	if zc.Encoding == "console" {
		enc = zapcore.NewConsoleEncoder(zc.EncoderConfig)
	} else {
		enc = zapcore.NewJSONEncoder(zc.EncoderConfig)
	}
	c := &flushAtCore{Core: zapcore.NewCore(enc, w, zc.Level), w: w, at: zapcore.WarnLevel, json: zc.Encoding != "console"}
	return zc.Build(zap.WrapCore(func(zapcore.Core) zapcore.Core { return c }))
}

// flushAtCore writes through a logWriter and flushes it after every entry
// at level at or above, so warnings and errors reach stderr when they are
// logged, after every line logged before them.
type flushAtCore struct {
	zapcore.Core
	w  *logWriter
	at zapcore.Level
	// json says the lines are zap's production JSON (loggerConfig), which
	// accessLog writes itself; fields says the core carries fields of a
	// With, which it would leave out.
	json, fields bool
}

func (c *flushAtCore) With(fields []zapcore.Field) zapcore.Core {
	return &flushAtCore{Core: c.Core.With(fields), w: c.w, at: c.at, json: c.json, fields: c.fields || len(fields) > 0}
}

func (c *flushAtCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *flushAtCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	err := c.Core.Write(e, fields)
	if e.Level >= c.at {
		if ferr := c.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

// logWriter is a zapcore.WriteSyncer that copies what is written into a
// buffer and writes it to out, in order, from a background goroutine:
// within interval of the first byte written into an empty buffer, at once
// once flushAt bytes are waiting. Writers never wait for out unless the
// buffer holds max bytes. Sync and Flush write everything buffered before
// they return. The flusher sleeps while nothing is buffered.
type logWriter struct {
	out      io.Writer
	interval time.Duration
	flushAt  int
	max      int

	mu  sync.Mutex // guards buf
	buf []byte

	wmu   sync.Mutex // held while writing to out, so flushes keep their order
	spare []byte     // the buffer being written or last written; under wmu

	kick   chan struct{} // the buffer is no longer empty
	urgent chan struct{} // the buffer holds flushAt bytes
}

func newLogWriter(out io.Writer, interval time.Duration, flushAt, max int) *logWriter {
	w := &logWriter{
		out: out, interval: interval, flushAt: flushAt, max: max,
		buf: make([]byte, 0, flushAt), spare: make([]byte, 0, flushAt),
		kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1),
	}
	go w.flusher()
	return w
}

// Write buffers p (zap hands over one whole line at a time, and a line is
// never split between two writes to out).
func (w *logWriter) Write(p []byte) (int, error) {
	for {
		w.mu.Lock()
		n := len(w.buf)
		if n == 0 || n+len(p) <= w.max {
			w.buf = append(w.buf, p...)
			w.mu.Unlock()
			if n == 0 {
				signal(w.kick)
			}
			if n < w.flushAt && n+len(p) >= w.flushAt {
				signal(w.urgent)
			}
			return len(p), nil
		}
		w.mu.Unlock()
		// Full: out is not keeping up. Wait for it like an unbuffered
		// writer, then try again.
		if err := w.Flush(); err != nil {
			return 0, err
		}
	}
}

// Flush writes out everything buffered so far.
func (w *logWriter) Flush() error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mu.Lock()
	b := w.buf
	w.buf = w.spare[:0]
	w.mu.Unlock()
	w.spare = b
	if len(b) == 0 {
		return nil
	}
	_, err := w.out.Write(b)
	if cap(b) > 2*w.max { // grown for a line larger than max: do not keep it
		w.spare = make([]byte, 0, w.flushAt)
	}
	return err
}

// Sync flushes; stderr itself needs no fsync for the lines to outlive the
// process.
func (w *logWriter) Sync() error { return w.Flush() }

func (w *logWriter) flusher() {
	t := time.NewTimer(w.interval)
	t.Stop()
	for {
		<-w.kick
		t.Reset(w.interval)
		select {
		case <-t.C:
		case <-w.urgent:
			t.Stop()
		}
		_ = w.Flush() // an error writing stderr has nowhere to be reported
	}
}

// signal wakes the reader of ch unless a wake-up is already pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// iso8601Time writes what zapcore.ISO8601TimeEncoder writes
// (2006-01-02T15:04:05.000Z0700) from a string made once per millisecond
// and location: under load many lines share their millisecond, and
// formatting the time for each was about 2 % of a kept lookup's CPU.
func iso8601Time(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(iso8601(t))
}

// iso8601 is t as iso8601Time writes it.
func iso8601(t time.Time) string {
	ms, loc := t.UnixMilli(), t.Location()
	if c := lastISO8601.Load(); c != nil && c.ms == ms && c.loc == loc {
		return c.s
	}
	c := &isoMilli{ms: ms, loc: loc, s: t.Format(iso8601Layout)}
	lastISO8601.Store(c)
	return c.s
}

const iso8601Layout = "2006-01-02T15:04:05.000Z0700"

type isoMilli struct {
	ms  int64
	loc *time.Location
	s   string
}

var lastISO8601 atomic.Pointer[isoMilli]
