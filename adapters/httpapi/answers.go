package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

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

type answer struct {
	contentType string
	body        []byte
	// gz is the body gzipped, made once by the first request that takes
	// gzip (compress.go), then served as it is.
	gzOnce sync.Once
	gz     []byte
}

// gzipped returns the compressed body, compressing it the first time.
func (a *answer) gzipped() []byte {
	a.gzOnce.Do(func() { a.gz = gzipBytes(a.body) })
	return a.gz
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

func (s *answers) get(key string, gen uint64) (*answer, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.gen != gen {
		return nil, false
	}
	a, ok := s.kept[key]
	return a, ok
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
func (a *API) kept(c *gin.Context) {
	if a.answers == nil {
		return
	}
	gen := a.answers.gens.Generation()
	key := c.Request.URL.Path + "?" + c.Request.URL.RawQuery
	if ans, ok := a.answers.get(key, gen); ok {
		keepable(c) // for the validators (cache.go)
		body := ans.body
		if c.GetBool(gzipOK) && len(body) >= gzipMin && compressible(ans.contentType) {
			body = ans.gzipped()
			c.Header("Content-Encoding", "gzip")
			c.Writer.Header().Add("Vary", "Accept-Encoding")
		}
		c.Header("Content-Length", strconv.Itoa(len(body)))
		c.Data(http.StatusOK, ans.contentType, body)
		c.Abort()
		return
	}
	w := &capture{ResponseWriter: c.Writer}
	c.Writer = w
	c.Next()
	c.Writer = w.ResponseWriter
	if c.GetBool(keepableKey) && w.Status() == http.StatusOK && w.buf.Len() == w.Size() &&
		a.answers.gens.Generation() == gen {
		a.answers.put(key, gen, &answer{contentType: w.Header().Get("Content-Type"), body: bytes.Clone(w.buf.Bytes())})
	}
}
