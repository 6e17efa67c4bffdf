package httpapi

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// Compression: answers in a text format (JSON, YAML, HTML, CSS, JS, SVG)
// of at least gzipMin bytes are gzipped when the request's Accept-Encoding
// takes gzip. Every answer in such a format says Vary: Accept-Encoding,
// compressed or not, so a shared cache keeps the two apart. An answer that
// already has a Content-Encoding (a kept answer compressed once, answers.go)
// passes through. Event streams (text/event-stream) are not compressed:
// their events must leave as they come. Only gzip: see docs/DECISIONS.md
// ("HTTP caching, compression, CORS") for brotli and zstd.
const (
	// gzipMin is the smallest answer compressed: below, the saving is a
	// few hundred bytes and gzip's framing eats part of it.
	gzipMin = 1024
	// gzipLevel is a speed/size trade measured in docs/PERFORMANCE.md.
	gzipLevel = gzip.DefaultCompression
)

var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return w
}}

// compressible tells whether a Content-Type is a text format worth
// compressing.
func compressible(ct string) bool {
	// The media type before any parameter, as mime.ParseMediaType reads
	// it, without parsing the parameters (a map per answer).
	mt, _, _ := strings.Cut(ct, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "application/json", "application/problem+json", "application/yaml", "application/x-yaml", "text/yaml",
		"text/html", "text/css", "text/javascript", "application/javascript", "text/plain", "image/svg+xml", "text/markdown":
		return true
	}
	return false
}

// acceptsGzip reads Accept-Encoding (RFC 9110 §12.5.3): gzip (or x-gzip,
// or *) with a q-value above 0.
func acceptsGzip(r *http.Request) bool {
	star := false
	for _, v := range r.Header["Accept-Encoding"] {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			switch coding {
			case "gzip", "x-gzip":
				return q > 0 // an explicit gzip decides, whatever * says
			case "*":
				star = q > 0
			}
		}
	}
	return star
}

// compress is the middleware: it wraps the writer, which decides once the
// answer's headers and first gzipMin bytes are known. The writer comes with
// the request's reqInfo when Observe made one (no allocation of its own).
func (a *API) compress(c *gin.Context) {
	var gw *gzipWriter
	if ri := infoOf(c.Request.Context()); ri != nil && !ri.gzTaken {
		ri.gzTaken = true
		gw = &ri.gz
	} else {
		gw = new(gzipWriter)
	}
	*gw = gzipWriter{ResponseWriter: c.Writer, accept: acceptsGzip(c.Request)}
	c.Writer = gw
	defer gw.finish()
	c.Next()
}

// gzipAccepted tells handlers after compress (kept answers, documents)
// whether this answer may be sent gzipped.
func gzipAccepted(c *gin.Context) bool {
	if ri := infoOf(c.Request.Context()); ri != nil && ri.gzTaken {
		return ri.gz.accept
	}
	return acceptsGzip(c.Request)
}

// passThrough makes the compress middleware's writer, when it is the
// writer w, send what follows as it is: for answers whose headers are
// already final (a kept answer, compressed once or too small).
func passThrough(w gin.ResponseWriter) {
	for {
		switch x := w.(type) {
		case *tagWriter:
			w = x.ResponseWriter
		case *gzipWriter:
			if x.state == undecided {
				x.state = plain
			}
			return
		default:
			return
		}
	}
}

const (
	undecided = iota
	plain
	zipping
)

// gzipWriter compresses the answer when its headers allow it. Size and
// Written count what the handler wrote (kept answers compare them with
// what they captured), not the compressed bytes.
type gzipWriter struct {
	gin.ResponseWriter
	accept bool
	state  int
	vary   bool
	buf    []byte
	gz     *gzip.Writer
	n      int
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// candidate decides from the headers whether this answer may be gzipped,
// and marks every answer in a compressible format Vary: Accept-Encoding.
func (w *gzipWriter) candidate() bool {
	h := w.Header()
	if !compressible(h.Get("Content-Type")) {
		return false
	}
	if !w.vary {
		w.vary = true
		if !varies(h, "Accept-Encoding") {
			h.Add("Vary", "Accept-Encoding")
		}
	}
	if !w.accept || h.Get("Content-Encoding") != "" {
		return false
	}
	switch s := w.Status(); {
	case s < 200, s == http.StatusNoContent, s == http.StatusNotModified, s == http.StatusPartialContent:
		return false
	}
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.Atoi(cl); err == nil && n < gzipMin {
			return false
		}
	}
	return true
}

// varies tells whether the Vary header already names a field.
func varies(h http.Header, field string) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, field) {
				return true
			}
		}
	}
	return false
}

func (w *gzipWriter) start() {
	h := w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	if et := h.Get("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
		h.Set("ETag", "W/"+et) // another representation of the same answer
	}
	w.gz = gzipPool.Get().(*gzip.Writer)
	w.gz.Reset(w.ResponseWriter)
	w.state = zipping
	if len(w.buf) > 0 {
		_, _ = w.gz.Write(w.buf)
		w.buf = nil
	}
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	switch w.state {
	case plain:
		return w.ResponseWriter.Write(b)
	case zipping:
		if _, err := w.gz.Write(b); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	if !w.candidate() {
		w.state = plain
		return w.ResponseWriter.Write(b)
	}
	w.buf = append(w.buf, b...)
	if len(w.buf) >= gzipMin {
		w.start()
	}
	return len(b), nil
}

func (w *gzipWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// WriteHeaderNow sends the headers: whatever comes after is sent as is.
func (w *gzipWriter) WriteHeaderNow() {
	if w.state == undecided {
		w.candidate() // for Vary
		w.state = plain
	}
	w.ResponseWriter.WriteHeaderNow()
}

func (w *gzipWriter) Flush() {
	if w.state == undecided && len(w.buf) > 0 {
		if w.candidate() {
			w.start()
		} else {
			w.release()
		}
	}
	if w.state == zipping {
		_ = w.gz.Flush()
	}
	w.ResponseWriter.Flush()
}

func (w *gzipWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.state = plain
	return w.ResponseWriter.Hijack()
}

func (w *gzipWriter) Size() int {
	if w.n > 0 {
		return w.n
	}
	return w.ResponseWriter.Size()
}

func (w *gzipWriter) Written() bool { return w.n > 0 || w.ResponseWriter.Written() }

// release sends what was held back, uncompressed.
func (w *gzipWriter) release() {
	w.state = plain
	if len(w.buf) > 0 {
		b := w.buf
		w.buf = nil
		if w.Header().Get("Content-Length") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		_, _ = w.ResponseWriter.Write(b)
	}
}

func (w *gzipWriter) finish() {
	switch w.state {
	case undecided:
		w.release()
	case zipping:
		_ = w.gz.Close()
		w.gz.Reset(nil)
		gzipPool.Put(w.gz)
		w.gz = nil
	}
}

// gzipBytes compresses a whole body (kept answers, the documentation).
func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b)/4 + 64)
	gz := gzipPool.Get().(*gzip.Writer)
	gz.Reset(&out)
	_, _ = gz.Write(b)
	_ = gz.Close()
	gz.Reset(nil)
	gzipPool.Put(gz)
	return out.Bytes()
}
