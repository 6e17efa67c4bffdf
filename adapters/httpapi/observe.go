package httpapi

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
)

// RequestIDHeader carries the request id: taken from the request when it
// is sane, generated otherwise, echoed in every answer.
const RequestIDHeader = "X-Request-Id"

// maxRequestID bounds a request id taken from a client.
const maxRequestID = 128

// reqInfo is what the outer wrapper (Observe) and the gin middleware share
// about one request: the id, the logger naming it, and the route template
// gin matched ("" when none). It is the request's context too (its
// parent's values and cancellation, and itself under reqInfoKey), and it
// holds the writers every request passes through, so they all come with
// the one allocation per request that Observe makes instead of one each
// (docs/PERFORMANCE.md section 18).
type reqInfo struct {
	context.Context
	id    string
	idv   [1]string // the X-Request-Id header's value, without an allocation
	base  *zap.Logger
	once  sync.Once
	log   *zap.Logger // base naming the id, made when first asked for
	route string

	sw statusWriter
	// gz is the compress middleware's writer (compress.go); gzTaken says
	// it is in use (should the engine run twice for one request).
	gz      gzipWriter
	gzTaken bool
}

// logger is the request's logger. It is made on first use: most requests
// log nothing but the access line, and a zap With per request cost 4 % of
// a kept lookup.
func (ri *reqInfo) logger() *zap.Logger {
	ri.once.Do(func() { ri.log = ri.base.With(zap.String("request_id", ri.id)) })
	return ri.log
}

type reqInfoKey struct{}

// Value is the parent context's, with the reqInfo itself under reqInfoKey.
func (ri *reqInfo) Value(key any) any {
	if _, ok := key.(reqInfoKey); ok {
		return ri
	}
	return ri.Context.Value(key)
}

func infoOf(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(reqInfoKey{}).(*reqInfo)
	return ri
}

// saneRequestID accepts 1-128 characters of letters, digits and . _ : -
// (UUIDs, ULIDs, trace ids, hex): nothing that could forge a log line or a
// header.
func saneRequestID(s string) bool {
	if s == "" || len(s) > maxRequestID {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns 32 hex digits from the runtime's ChaCha8 generator
// (seeded from the system's entropy): unique for all practical purposes,
// which is all an id naming a request in the logs needs, and without the
// system call and allocations of crypto/rand.
func newRequestID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	var h [32]byte
	hex.Encode(h[:], b[:])
	return string(h[:])
}

// LoggerFrom returns the logger of the request ctx belongs to (it names
// the request id), or fallback outside a request.
func LoggerFrom(ctx context.Context, fallback *zap.Logger) *zap.Logger {
	if ri := infoOf(ctx); ri != nil {
		return ri.logger()
	}
	return fallback
}

// log is the logger of the request c serves.
func (a *API) log(c *gin.Context) *zap.Logger { return LoggerFrom(c.Request.Context(), a.d.Log) }

// requestIDOf is the id of the request c serves ("" outside Observe).
func requestIDOf(c *gin.Context) string {
	if ri := infoOf(c.Request.Context()); ri != nil {
		return ri.id
	}
	return ""
}

// Observe wraps the whole handler (the engine, or in the hosted build the
// guard in front of it): it gives the request its id (X-Request-Id, in the
// context with a logger naming it, echoed in the answer), writes the
// access log line at info and records the request's metrics. The access
// log names the method, route template, path (never the query, which may
// carry a key), status, bytes, duration, client address and request id;
// never a header.
func (a *API) Observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := headerValue(r.Header, RequestIDHeader)
		if !saneRequestID(id) {
			id = newRequestID()
		}
		ri := &reqInfo{Context: r.Context(), id: id, base: a.d.Log}
		ri.idv[0] = id
		w.Header()[RequestIDHeader] = ri.idv[:] // canonical already; cap 1, so an Add copies
		ctx := core.WithRequestID(ri, id)
		sw := &ri.sw
		sw.ResponseWriter = w
		defer func() {
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			if r.Context().Err() != nil && !sw.wrote {
				status = 499 // the client went away before an answer
			}
			took := time.Since(start)
			route := ri.route
			if route == "" {
				route = "unmatched"
			}
			method := metricMethod(r.Method)
			a.metrics.ObserveHTTP(route, method, status, took)
			if a.d.Access != nil {
				a.d.Access(AccessLine{Method: r.Method, Route: route, Path: r.URL.Path, Status: status, Bytes: sw.bytes,
					Took: took, Client: clientAddr(r), RequestID: id})
			} else if ce := a.access.Check(zap.InfoLevel, "http"); ce != nil {
				f := accessFields.Get().(*[8]zap.Field)
				f[0], f[1], f[2] = zap.String("method", r.Method), zap.String("route", route), zap.String("path", r.URL.Path)
				f[3], f[4], f[5] = zap.Int("status", status), zap.Int64("bytes", sw.bytes), zap.Duration("took", took)
				f[6], f[7] = zap.String("client", clientAddr(r)), zap.String("request_id", id)
				ce.Write(f[:]...)
				*f = [8]zap.Field{}
				accessFields.Put(f)
			}
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// accessFields holds the fields of access lines being written: passed
// to zap as a literal list they were an allocation of 512 bytes per
// request (the cores take the slice through an interface). Every core
// encodes or copies the fields before Write returns.
var accessFields = sync.Pool{New: func() any { return new([8]zap.Field) }}

// accessLogger is log without the caller: every access line would name
// the same line of Observe, and finding it (runtime.Callers) was about 3 %
// of a kept lookup's CPU.
func accessLogger(log *zap.Logger) *zap.Logger {
	if log == nil {
		return nil
	}
	return log.WithOptions(zap.WithCaller(false))
}

// route is the gin middleware that tells Observe which route template
// (FullPath, never the raw path) the request matched.
func (a *API) route(c *gin.Context) {
	if ri := infoOf(c.Request.Context()); ri != nil {
		ri.route = c.FullPath()
	}
	c.Next()
}

// metricMethod keeps the method label a bounded set.
func metricMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// statusWriter records the status and the bytes of an answer; it keeps
// flushing (SSE, streamable MCP) and hijacking working.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Flush() {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("hijacking is not supported")
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
