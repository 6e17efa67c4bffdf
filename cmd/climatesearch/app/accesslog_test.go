package app

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/climatesearch/climatesearch/adapters/httpapi"
)

// The access lines accessLog writes are, byte for byte, the lines zap's
// JSON logger of NewLogger writes for the same fields (but the time, which
// iso8601Time's test covers), paths and ids that need escaping included.
func TestAccessLineIsZaps(t *testing.T) {
	lines := []httpapi.AccessLine{
		{Method: "GET", Route: "/api/resources/:id", Path: "/api/resources/national:6000000000", Status: 200, Bytes: 2001, Took: 1292 * time.Nanosecond, Client: "127.0.0.1", RequestID: "114f78661ffc904b87dac0fc9b38a9ce"},
		{Method: "POST", Route: "unmatched", Path: "/a\"b\\c\nd\re\tf\x00g\x1fh\x7fi", Status: 404, Bytes: 0, Took: 0, Client: "::1", RequestID: "x"},
		{Method: "GET", Route: "/api/search", Path: "/sök/spånskiva/<script>&'/\u2028/😀/\xff\xfe/a\xc3", Status: 499, Bytes: -1, Took: 3*time.Second + 7*time.Millisecond, Client: "[2001:db8::1]:443", RequestID: ""},
		{Method: "DELETE", Route: "", Path: "", Status: 0, Bytes: 1 << 40, Took: time.Duration(1<<63 - 1), Client: "", RequestID: strings.Repeat("a", 128)},
	}
	ours, theirs := &recordingOut{}, &recordingOut{}
	log, err := buildLogger(loggerConfig("json"), ours)
	if err != nil {
		t.Fatal(err)
	}
	write := accessLog(log, "http")
	if write == nil {
		t.Fatal("no access writer for NewLogger's JSON logger")
	}
	zc := loggerConfig("json")
	zl := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zc.EncoderConfig), zapcore.AddSync(theirs), zapcore.InfoLevel)).Named("http")
	for _, l := range lines {
		write(l)
		zl.Info("http", zap.String("method", l.Method), zap.String("route", l.Route), zap.String("path", l.Path),
			zap.Int("status", l.Status), zap.Int64("bytes", l.Bytes), zap.Duration("took", l.Took),
			zap.String("client", l.Client), zap.String("request_id", l.RequestID))
	}
	if err := log.Sync(); err != nil {
		t.Fatal(err)
	}
	ts := regexp.MustCompile(`"ts":"[^"]*"`)
	got := ts.ReplaceAllString(ours.String(), `"ts":"T"`)
	want := ts.ReplaceAllString(theirs.String(), `"ts":"T"`)
	if got != want {
		t.Fatalf("access lines differ from zap's:\n%s\nzap:\n%s", got, want)
	}
	if n := strings.Count(got, "\n"); n != len(lines) {
		t.Fatalf("%d lines, want %d", n, len(lines))
	}
	if !regexp.MustCompile(`^\{"level":"info","ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z?[-+0-9]*","logger":"http","msg":"http","method":"GET"`).MatchString(ours.String()) {
		t.Fatalf("first line: %s", ours.String())
	}
}

// Above info nothing is written; the level is read per line, so a level
// changed at run time applies at once.
func TestAccessLineFollowsTheLevel(t *testing.T) {
	out := &recordingOut{}
	zc := loggerConfig("json")
	log, err := buildLogger(zc, out)
	if err != nil {
		t.Fatal(err)
	}
	write := accessLog(log, "http")
	zc.Level.SetLevel(zapcore.WarnLevel)
	write(httpapi.AccessLine{Method: "GET", Path: "/quiet"})
	zc.Level.SetLevel(zapcore.InfoLevel)
	write(httpapi.AccessLine{Method: "GET", Path: "/heard"})
	_ = log.Sync()
	if s := out.String(); strings.Contains(s, "/quiet") || !strings.Contains(s, "/heard") {
		t.Fatalf("log: %q", s)
	}
}

// Loggers whose lines accessLog would not reproduce get no writer: the
// console format, a logger with fields, a logger NewLogger did not build.
func TestAccessLineOnlyForTheJSONLog(t *testing.T) {
	console, err := buildLogger(loggerConfig("console"), &recordingOut{})
	if err != nil {
		t.Fatal(err)
	}
	json, err := buildLogger(loggerConfig("json"), &recordingOut{})
	if err != nil {
		t.Fatal(err)
	}
	for name, log := range map[string]*zap.Logger{
		"console":     console,
		"with fields": json.With(zap.String("replica", "a")),
		"nop":         zap.NewNop(),
	} {
		if accessLog(log, "http") != nil {
			t.Errorf("%s: an access writer", name)
		}
	}
}
