package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
)

// HEAD answers every GET route (RFC 9110 §9.3.2): the request runs as a GET
// and the answer keeps its status and headers, Content-Length included,
// without the body. gin routes methods exactly (a HEAD would be 405), so
// the first middleware of the engine serves a HEAD as a GET through the
// engine once more, for the API, the console and MCP alike. Streams (the
// MCP event streams, NoHead) are the exception: a HEAD must not open one,
// so they answer 405.
//
// The GET runs in full (a HEAD costs what the GET costs; kept answers make
// repeated ones cheap): the headers of a HEAD are those of the GET,
// Content-Length and Content-Encoding included.
func (a *API) head(c *gin.Context) {
	if c.Request.Method != http.MethodHead {
		return
	}
	c.Abort()
	a.x.mu.RLock()
	why, refused := a.x.noHead[c.Request.URL.Path]
	a.x.mu.RUnlock()
	if refused {
		writeError(c, http.StatusMethodNotAllowed, "HEAD would "+why+" at "+c.Request.URL.Path+"; use GET")
		return
	}
	get := c.Request.Clone(c.Request.Context())
	get.Method = http.MethodGet
	hw := &headWriter{w: c.Writer, status: http.StatusOK}
	a.engine.ServeHTTP(hw, get)
	hw.finish()
}

// NoHead names GET paths that open an event stream: HEAD answers 405 there.
func (a *API) NoHead(paths ...string) {
	for _, p := range paths {
		a.refuseHead(p, "open the event stream")
	}
}

// refuseHead makes HEAD answer 405 at path: the GET does work a HEAD must
// not trigger (a stream opened, a whole backup taken).
func (a *API) refuseHead(path, why string) {
	a.x.mu.Lock()
	defer a.x.mu.Unlock()
	if a.x.noHead == nil {
		a.x.noHead = map[string]string{}
	}
	a.x.noHead[path] = why
}

// headWriter holds the status back until the handler is done, counts the
// body instead of sending it, and then sends the headers with the
// Content-Length the GET would have had.
type headWriter struct {
	w       http.ResponseWriter
	status  int
	n       int64
	written bool
}

func (h *headWriter) Header() http.Header { return h.w.Header() }

func (h *headWriter) WriteHeader(code int) {
	if h.written || code < 200 && code != http.StatusSwitchingProtocols {
		return // informational answers (103) are not held
	}
	h.status, h.written = code, true
}

func (h *headWriter) Write(b []byte) (int, error) {
	h.written = true
	h.n += int64(len(b))
	return len(b), nil
}

func (h *headWriter) WriteString(s string) (int, error) {
	h.written = true
	h.n += int64(len(s))
	return len(s), nil
}

// Flush does nothing: the headers go out once the handler is done.
func (h *headWriter) Flush() {}

// Hijack is refused: a HEAD upgrades nothing.
func (h *headWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, http.ErrNotSupported
}

func (h *headWriter) finish() {
	hd := h.w.Header()
	if hd.Get("Content-Length") == "" && h.n > 0 && h.status != http.StatusNotModified && h.status != http.StatusNoContent {
		hd.Set("Content-Length", strconv.FormatInt(h.n, 10))
	}
	h.w.WriteHeader(h.status)
}
