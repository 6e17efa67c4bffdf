package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/ports"
)

// Answers of reads are kept, encoded, until the next write becomes visible.
// Between two ingests the same request gets the same answer (search and
// lookup are deterministic over the same data, see core.Visibility), and
// most traffic repeats: the same product looked up, the same words searched
// by many users and agents. A kept answer costs a map lookup instead of the
// search, the store reads and the JSON encoding (about 180 µs of CPU for a
// search of the real catalog, 12 µs for a lookup; docs/PERFORMANCE.md).
//
// Invalidation is exact, not timed: an answer is kept with the generation
// of the data it was computed from and served only while that generation is
// current; the first request after a write drops everything kept. Answers
// that also depend on the vector index or the reranker (vector=true,
// rerank=true), which catch up after a write in the background, are not
// kept.
const (
	// maxAnswer is the largest answer kept (the full listing of both real
	// catalogs is about 700 KB).
	maxAnswer = 1 << 20
	// maxAnswers and maxAnswerBytes bound the cache; when either is
	// reached it starts over (frequent requests come back first).
	maxAnswers     = 4096
	maxAnswerBytes = 64 << 20
)

// answer is a kept answer with the header values it is served with, made
// once when it is kept: serving it assigns them to the header map (no
// formatting, no canonicalisation, no allocation; docs/PERFORMANCE.md
// section 18). The slices are shared by every answer that serves them:
// nothing writes into them, and their capacity is their length, so an
// Add to the same header copies instead of writing into them.
type answer struct {
	contentType string
	body        []byte

	ctv  []string // Content-Type
	lenv []string // Content-Length of body
	// vary: the format is compressible (compress.go), so the answer says
	// Vary: Accept-Encoding; zip: and it is large enough to be gzipped.
	vary, zip bool

	// The validators of the request that computed the answer (cache.go),
	// valid while the data stamp's generation is tagGen; etag is "" when
	// that request had none.
	etag   string
	etagv  []string
	mod    time.Time // zero: no Last-Modified
	modv   []string
	tagGen uint64

	// gz is the body gzipped, made once by the first request that takes
	// gzip, then served as it is.
	gzOnce sync.Once
	gz     []byte
	gzLenv []string
}

// Header values shared by the answers that carry them.
var (
	varyAcceptEncoding = []string{"Accept-Encoding"}
	gzipEncoding       = []string{"gzip"}
)

func newAnswer(contentType string, body []byte) *answer {
	vary := compressible(contentType)
	return &answer{
		contentType: contentType, body: body,
		ctv: []string{contentType}, lenv: []string{strconv.Itoa(len(body))},
		vary: vary, zip: vary && len(body) >= gzipMin,
	}
}

// tag keeps the validators the answer was computed with.
func (a *answer) tag(etag string, mod time.Time, modText string, gen uint64) {
	a.etag, a.etagv, a.mod, a.tagGen = etag, []string{etag}, mod, gen
	if !mod.IsZero() {
		a.modv = []string{modText}
	}
}

// gzipped returns the compressed body and its length, compressing it the
// first time.
func (a *answer) gzipped() ([]byte, []string) {
	a.gzOnce.Do(func() {
		a.gz = gzipBytes(a.body)
		a.gzLenv = []string{strconv.Itoa(len(a.gz))}
	})
	return a.gz, a.gzLenv
}

// answers is the cache of one generation.
type answers struct {
	gens ports.Generations

	mu    sync.RWMutex
	gen   uint64
	kept  map[string]*answer
	bytes int
}

func newAnswers(gens ports.Generations) *answers {
	return &answers{gens: gens, kept: map[string]*answer{}}
}

// get returns the answer kept for key in generation gen, nil when none.
// key is the bytes of appendKey: the map lookup converts them without
// copying.
func (s *answers) get(key []byte, gen uint64) *answer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.gen != gen {
		return nil
	}
	return s.kept[string(key)]
}

// appendKey appends the key of the request's answer: its path and query.
func appendKey(b []byte, r *http.Request) []byte {
	b = append(b, r.URL.Path...)
	b = append(b, '?')
	return append(b, r.URL.RawQuery...)
}

func (s *answers) put(key string, gen uint64, a *answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen || len(s.kept) >= maxAnswers || s.bytes+len(a.body) > maxAnswerBytes {
		if gen < s.gen {
			return // computed from older data than what is kept now
		}
		s.gen, s.bytes = gen, 0
		clear(s.kept)
	}
	s.kept[key] = a
	s.bytes += len(a.body)
}

// keepable marks a request whose answer may be kept: the handler calls it
// once it knows the answer depends only on the store and the full-text index.
func keepable(c *gin.Context) { c.Set(keepableKey, true) }

const keepableKey = "httpapi.keepable"

// capture is a gin.ResponseWriter that also keeps what is written.
type capture struct {
	gin.ResponseWriter
	buf bytes.Buffer
	max int // 0: maxAnswer
}

func (w *capture) limit() int {
	if w.max > 0 {
		return w.max
	}
	return maxAnswer
}

func (w *capture) Write(b []byte) (int, error) {
	if w.buf.Len()+len(b) <= w.limit() {
		w.buf.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *capture) WriteString(s string) (int, error) {
	if w.buf.Len()+len(s) <= w.limit() {
		w.buf.WriteString(s)
	}
	return w.ResponseWriter.WriteString(s)
}

// kept serves a read from the kept answers, or runs it and keeps its
// answer when the handler marked it keepable, it succeeded, and no write
// became visible meanwhile (so it was computed from the generation read
// before it ran: a write moves the generation before readers see it).
// A kept answer that has its validators is served by validate (cache.go)
// before this runs; this serves the others.
func (a *API) kept(c *gin.Context) {
	if a.answers == nil {
		return
	}
	gen := a.answers.gens.Generation()
	var kb [256]byte
	key := appendKey(kb[:0], c.Request)
	if ans := a.answers.get(key, gen); ans != nil {
		keepable(c) // for the validators computed for this request (cache.go)
		a.serveKept(c, ans, false)
		return
	}
	w := &capture{ResponseWriter: c.Writer}
	c.Writer = w
	c.Next()
	c.Writer = w.ResponseWriter
	if c.GetBool(keepableKey) && w.Status() == http.StatusOK && w.buf.Len() == w.Size() &&
		a.answers.gens.Generation() == gen {
		ans := newAnswer(w.Header().Get("Content-Type"), bytes.Clone(w.buf.Bytes()))
		if tw, ok := w.ResponseWriter.(*tagWriter); ok {
			tw.keepTags(ans)
		}
		a.answers.put(string(key), gen, ans)
	}
}

// keptAnswer returns the answer kept for the request, nil when none.
func (a *API) keptAnswer(c *gin.Context) *answer {
	if a.answers == nil {
		return nil
	}
	var kb [256]byte
	return a.answers.get(appendKey(kb[:0], c.Request), a.answers.gens.Generation())
}

// serveKept sends a kept answer with its prepared headers: with its
// validators when validated (and then 304 when the client's copy is
// current), gzipped when the request takes gzip and the answer is large
// enough. Its headers are final, so the compress middleware's writer lets
// it pass as it is.
func (a *API) serveKept(c *gin.Context, ans *answer, validated bool) {
	hd := c.Writer.Header()
	if ans.vary { // the same as the compress middleware adds
		if _, ok := hd["Vary"]; ok {
			hd.Add("Vary", "Accept-Encoding")
		} else {
			hd["Vary"] = varyAcceptEncoding
		}
	}
	if validated {
		hd["Etag"] = ans.etagv // ETag in its canonical form, as Header.Get looks it up
		if ans.modv != nil {
			hd["Last-Modified"] = ans.modv
		}
		if current(c.Request, ans.etag, ans.mod) {
			passThrough(c.Writer)
			c.AbortWithStatus(http.StatusNotModified)
			return
		}
	}
	body, lenv := ans.body, ans.lenv
	if ans.zip && gzipAccepted(c) {
		body, lenv = ans.gzipped()
		hd["Content-Encoding"] = gzipEncoding
	}
	hd["Content-Type"] = ans.ctv
	hd["Content-Length"] = lenv
	passThrough(c.Writer)
	c.Writer.WriteHeader(http.StatusOK)
	_, _ = c.Writer.Write(body)
	c.Abort()
}
