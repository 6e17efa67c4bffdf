package httpapi

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"
)

type counter struct{ n atomic.Uint64 }

func (c *counter) Generation() uint64 { return c.n.Load() }

// TestKeptAnswers: a keepable answer is computed once per generation, an
// answer not marked keepable, a failure or a too large answer every time.
func TestKeptAnswers(t *testing.T) {
	gin.SetMode(gin.TestMode)
	gens := &counter{}
	a := &API{answers: newAnswers(gens)}
	runs := map[string]int{}
	e := gin.New()
	handler := func(status int, keep bool, size int) gin.HandlerFunc {
		return func(c *gin.Context) {
			runs[c.Request.URL.Path]++
			if keep {
				keepable(c)
			}
			c.Data(status, "application/json", make([]byte, size))
		}
	}
	e.GET("/keep", a.kept, handler(200, true, 10))
	e.GET("/nokeep", a.kept, handler(200, false, 10))
	e.GET("/fail", a.kept, handler(404, true, 10))
	e.GET("/huge", a.kept, handler(200, true, maxAnswer+1))
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w
	}
	for range 3 {
		for _, p := range []string{"/keep", "/keep?x=1", "/nokeep", "/fail", "/huge"} {
			w := get(p)
			if want := map[string]int{"/fail": 404}[p]; want != 0 && w.Code != want || want == 0 && w.Code != 200 {
				t.Errorf("%s: %d", p, w.Code)
			}
		}
	}
	gens.n.Add(1) // a write became visible
	get("/keep")
	want := map[string]int{"/keep": 3, "/nokeep": 3, "/fail": 3, "/huge": 3}
	for p, n := range want {
		if runs[p] != n {
			t.Errorf("%s ran %d times, want %d", p, runs[p], n)
		}
	}
	if w := get("/keep"); w.Header().Get("Content-Type") != "application/json" || w.Body.Len() != 10 {
		t.Errorf("kept answer: %q, %d bytes", w.Header().Get("Content-Type"), w.Body.Len())
	}
}
