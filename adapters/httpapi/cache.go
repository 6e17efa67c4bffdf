package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/ports"
)

// extras holds the state of the HTTP conventions this file, compress.go,
// head.go and cors.go add: validators, compressed documents, streams.
type extras struct {
	mu     sync.RWMutex
	noHead map[string]string // path -> why HEAD is refused there

	stamp   ports.DataStamp // nil: /api answers carry no validators
	private bool            // Cache-Control private (the hosted build's paid reads)
	seed    string          // the build and the settings answers depend on
	built   time.Time       // lower bound of Last-Modified

	static sync.Map // path -> *staticAnswer

	lastMod atomic.Pointer[httpDate] // the last Last-Modified formatted
}

// httpDate is a time in the HTTP date format.
type httpDate struct {
	t time.Time
	s string
}

// httpTime formats t for Last-Modified, once per distinct time: every
// read of one generation names the same last write.
func (x *extras) httpTime(t time.Time) string {
	if d := x.lastMod.Load(); d != nil && d.t.Equal(t) {
		return d.s
	}
	d := &httpDate{t: t, s: t.UTC().Format(http.TimeFormat)}
	x.lastMod.Store(d)
	return d.s
}

// Validators turns on ETag, Last-Modified and 304 for the /api reads.
// seed names what else the answers depend on (the build, settings that
// change them); private makes the answers private to the client (the
// hosted build: they are paid for, a shared cache must not hand them on).
func (a *API) Validators(stamp ports.DataStamp, seed string, private bool) {
	a.x.stamp, a.x.seed, a.x.private = stamp, BuildID()+"\x00"+seed, private
	a.x.built = buildTime()
}

// BuildID names the running build: module version and VCS revision when
// the binary carries them, else a hash of the executable's build settings.
func BuildID() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	id := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			id += "/" + s.Value
		}
	}
	return id
}

// buildTime is the commit time of the build when it is known; answers are
// not older than the code that wrote them.
func buildTime() time.Time {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					return t
				}
			}
		}
	}
	return time.Time{}
}

// cacheControl is what every /api read says: stored answers may be reused
// once revalidated (a 304 costs no body, and an ingest can come at any
// time, so no freshness lifetime is promised). The values are shared by
// every answer (see answer).
func (a *API) cacheControl() []string {
	if a.x.private {
		return privateNoCache
	}
	return publicNoCache
}

var (
	publicNoCache  = []string{"public, no-cache"}
	privateNoCache = []string{"private, no-cache"}
)

// tagged tells whether the answer of a read depends only on the stored
// data and the full-text index (the answers kept in answers.go): those get
// validators. Vector and reranked searches change in the background after
// a write (embedding, a remote reranker), /api/catalogs reports the vector
// coverage and the schedule, and /origin is a redirect: none is tagged.
func tagged(c *gin.Context) bool {
	switch c.FullPath() {
	case "/api/catalogs", "/api/resources/:id/origin", "":
		return false
	case "/api/search":
		for _, p := range []string{"vector", "rerank"} {
			if b, err := strconv.ParseBool(c.Query(p)); err == nil && b {
				return false
			}
		}
	}
	return true
}

// validate is the middleware of the /api reads: ETag (weak: the gzipped
// and the plain answer carry the same one) from the data stamp, the build
// and the request's path and query; 304 for a matching If-None-Match (or,
// without one, an If-Modified-Since not older than the last write).
// A kept answer (answers.go) keeps the validators it was computed with and
// is served here with them while the stamp has not moved: no hash, no
// formatting, no wrapped writer.
// In the hosted build the guard runs before the engine, so a 304 is only
// given to a call the guard admitted (and charged).
func (a *API) validate(c *gin.Context) {
	if c.Request.Method != http.MethodGet {
		return
	}
	c.Writer.Header()["Cache-Control"] = a.cacheControl()
	if a.x.stamp == nil {
		return
	}
	gen := a.x.stamp.Generation()
	if ans := a.keptAnswer(c); ans != nil && ans.etag != "" && ans.tagGen == gen {
		a.serveKept(c, ans, true)
		return
	}
	if !tagged(c) {
		return
	}
	token, mod, err := a.x.stamp.Stamp(c)
	if err != nil {
		return // no validators; the handler reports the store's trouble
	}
	etag := a.etag(token, c.Request)
	if mod.Before(a.x.built) {
		mod = a.x.built
	}
	hd := c.Writer.Header()
	hd["Etag"] = []string{etag} // ETag in its canonical form
	modText := ""
	if !mod.IsZero() {
		modText = a.x.httpTime(mod)
		hd["Last-Modified"] = []string{modText}
	}
	if current(c.Request, etag, mod) {
		hd.Add("Vary", "Accept-Encoding")
		c.AbortWithStatus(http.StatusNotModified)
		return
	}
	c.Writer = &tagWriter{ResponseWriter: c.Writer, c: c, a: a, gen: gen, etag: etag, mod: mod, modText: modText}
	c.Next()
}

// etag is the tag of the request's answer over the data named by token.
// FNV-1a, not a cryptographic hash: the tag only has to differ when the
// question or the data differ, stay the same across restarts, and cost
// little.
func (a *API) etag(token string, r *http.Request) string {
	h := uint64(fnvOffset)
	for _, s := range [...]string{a.x.seed, "\x00", token, "\x00", r.URL.Path, "?", r.URL.RawQuery} {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= fnvPrime
		}
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h)
	return `W/"` + hex.EncodeToString(b[:]) + `"`
}

// The 64-bit FNV-1a parameters (as hash/fnv).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// current tells whether the client's copy, named by the request's
// If-None-Match or (without one) If-Modified-Since, is the answer tagged
// etag, last modified at mod.
func current(r *http.Request, etag string, mod time.Time) bool {
	if inm := headerValue(r.Header, "If-None-Match"); inm != "" {
		return etagMatch(inm, etag)
	}
	ims := headerValue(r.Header, "If-Modified-Since")
	if ims == "" || mod.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	return err == nil && !mod.Truncate(time.Second).After(t)
}

// headerValue is h.Get(key) for a key in canonical form (the server
// canonicalises the request's header names), without canonicalising it
// again on every request.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// etagMatch is the weak comparison of If-None-Match (RFC 9110 §13.1.2).
func etagMatch(header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// tagWriter takes the validators back from an answer they do not describe:
// a failure, an answer the handler did not mark as depending on the store
// and the text index only (vector search), or one computed while a write
// became visible (it may show the newer data under the older tag). An
// answer it let keep them is kept with them (keepTags).
type tagWriter struct {
	gin.ResponseWriter
	c       *gin.Context
	a       *API
	gen     uint64
	etag    string
	mod     time.Time
	modText string
	checked bool
	dropped bool
}

func (w *tagWriter) check() {
	if w.checked {
		return
	}
	w.checked = true
	if w.Status() != http.StatusOK || !w.c.GetBool(keepableKey) || w.a.x.stamp.Generation() != w.gen {
		w.dropped = true
		w.Header().Del("ETag")
		w.Header().Del("Last-Modified")
	}
}

// keepTags gives a kept answer the validators it was sent with.
func (w *tagWriter) keepTags(ans *answer) {
	if w.checked && !w.dropped {
		ans.tag(w.etag, w.mod, w.modText, w.gen)
	}
}

func (w *tagWriter) WriteHeaderNow() { w.check(); w.ResponseWriter.WriteHeaderNow() }

func (w *tagWriter) Write(b []byte) (int, error) {
	w.check()
	return w.ResponseWriter.Write(b)
}

func (w *tagWriter) WriteString(s string) (int, error) {
	w.check()
	return w.ResponseWriter.WriteString(s)
}

// staticAnswer is a document that never changes while the process runs
// (/openapi.yaml, the Swagger UI under /docs): its ETag is a hash of the
// body, computed once, and its gzipped form is made once.
type staticAnswer struct {
	header http.Header
	body   []byte
	etag   string
	gzOnce sync.Once
	gz     []byte
}

// maxStatic bounds what is kept of a document (the Swagger UI bundle is
// 1.7 MB).
const maxStatic = 8 << 20

// static serves an embedded document from what its handler answered the
// first time: with an ETag, 304 for If-None-Match, and gzipped once.
func (a *API) static(c *gin.Context) {
	if c.Request.Method != http.MethodGet {
		return
	}
	key := c.Request.URL.Path
	v, ok := a.x.static.Load(key)
	if !ok {
		if c.Request.URL.RawQuery != "" {
			return // not kept: the handler answers
		}
		// The first request runs the handler into a buffer; a success is
		// kept and served below, anything else is sent as it came.
		h := &holdWriter{ResponseWriter: c.Writer, header: http.Header{}, status: http.StatusOK}
		c.Writer = h
		c.Next()
		c.Writer = h.ResponseWriter
		if h.status != http.StatusOK || h.buf.Len() > maxStatic {
			for k, vs := range h.header {
				c.Writer.Header()[k] = vs
			}
			c.Writer.WriteHeader(h.status)
			_, _ = c.Writer.Write(h.buf.Bytes())
			return
		}
		sum := sha256.Sum256(h.buf.Bytes())
		s := &staticAnswer{header: h.header, body: bytes.Clone(h.buf.Bytes()), etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		s.header.Del("Content-Length")
		v, _ = a.x.static.LoadOrStore(key, s)
	}
	s := v.(*staticAnswer)
	hd := c.Writer.Header()
	for k, vs := range s.header {
		hd[k] = vs
	}
	if hd.Get("Cache-Control") == "" {
		hd.Set("Cache-Control", "public, no-cache")
	}
	hd.Set("ETag", s.etag)
	if etagMatch(c.GetHeader("If-None-Match"), s.etag) {
		hd.Add("Vary", "Accept-Encoding")
		c.AbortWithStatus(http.StatusNotModified)
		return
	}
	body := s.body
	if len(body) >= gzipMin && compressible(hd.Get("Content-Type")) && gzipAccepted(c) {
		s.gzOnce.Do(func() { s.gz = gzipBytes(s.body) })
		body = s.gz
		hd.Set("Content-Encoding", "gzip")
		hd.Set("ETag", "W/"+s.etag)
		hd.Add("Vary", "Accept-Encoding")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write(body)
	c.Abort()
}

// holdWriter keeps a handler's whole answer instead of sending it.
type holdWriter struct {
	gin.ResponseWriter
	header http.Header
	status int
	buf    bytes.Buffer
}

func (h *holdWriter) Header() http.Header               { return h.header }
func (h *holdWriter) WriteHeader(code int)              { h.status = code }
func (h *holdWriter) WriteHeaderNow()                   {}
func (h *holdWriter) Write(b []byte) (int, error)       { return h.buf.Write(b) }
func (h *holdWriter) WriteString(s string) (int, error) { return h.buf.WriteString(s) }
func (h *holdWriter) Status() int                       { return h.status }
func (h *holdWriter) Size() int                         { return h.buf.Len() }
func (h *holdWriter) Written() bool                     { return h.buf.Len() > 0 }
func (h *holdWriter) Flush()                            {}
