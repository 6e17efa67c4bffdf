package app

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/climatesearch/climatesearch/adapters/httpapi"
)

// accessLog returns what writes the HTTP access lines of the logger
// named name under log, when log is NewLogger's JSON logger: each line is
// the text zap's encoder makes of the same entry and fields
// (TestAccessLineIsZaps), appended into a pooled buffer and handed to the
// log's buffered writer. Going through zap cost about 1.4 µs per request,
// a fifth of a kept lookup's CPU in process: eight Fields built into a
// pooled array (with their write barriers), the encoder's clone and its
// per-field dispatch (docs/PERFORMANCE.md section 18b). Nil for any other
// logger (console format, tests' loggers, a core with fields): httpapi
// then logs through zap.
func accessLog(log *zap.Logger, name string) func(httpapi.AccessLine) {
	c, ok := log.Core().(*flushAtCore)
	if !ok || !c.json || c.fields {
		return nil
	}
	head := `{"level":"info","ts":"`
	mid := appendString([]byte(`","logger":`), name)
	mid = append(mid, `,"msg":"http"`...)
	return func(l httpapi.AccessLine) {
		if !c.Enabled(zapcore.InfoLevel) {
			return
		}
		bp := linePool.Get().(*[]byte)
		b := append((*bp)[:0], head...)
		b = append(b, iso8601(time.Now())...)
		b = append(b, mid...)
		b = appendString(append(b, `,"method":`...), l.Method)
		b = appendString(append(b, `,"route":`...), l.Route)
		b = appendString(append(b, `,"path":`...), l.Path)
		b = strconv.AppendInt(append(b, `,"status":`...), int64(l.Status), 10)
		b = strconv.AppendInt(append(b, `,"bytes":`...), l.Bytes, 10)
		b = appendSeconds(append(b, `,"took":`...), l.Took)
		b = appendString(append(b, `,"client":`...), l.Client)
		b = appendString(append(b, `,"request_id":`...), l.RequestID)
		b = append(b, "}\n"...)
		_, _ = c.w.Write(b) // copies b; an error writing stderr has nowhere to go
		*bp = b
		linePool.Put(bp)
	}
}

// linePool holds the buffers access lines are made in.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendSeconds appends d as zapcore.SecondsDurationEncoder through the
// JSON encoder does: seconds, the shortest decimal that reads back.
// (a Duration's seconds are always finite: zap's NaN and Inf cases never
// arise).
func appendSeconds(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, float64(d)/float64(time.Second), 'f', -1, 64)
}

// appendString appends s as a JSON string, escaped as zap's JSON encoder
// escapes it: \" \\ \n \r \t, other control bytes as \u00XX, an invalid
// UTF-8 byte as \ufffd, everything else (HTML characters included) as is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
