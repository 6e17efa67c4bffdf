package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/climatesearch/climatesearch/core"
)

// keptCore answers a lookup with a resource of about 2 KB (the real
// national:6000000000 is 2,001 bytes) and a search with ten of them.
type keptCore struct{ loadingCore }

func (*keptCore) Get(context.Context, string, core.Lang) (core.Resource, error) {
	return core.Resource{ID: "6000000000", Catalog: core.National, Name: "Spånskiva", Description: strings.Repeat("Spånskivor är gjorda av träspån. ", 55)}, nil
}

func (k *keptCore) Search(ctx context.Context, req core.SearchRequest) (core.SearchResponse, error) {
	r, _ := k.Get(ctx, "", "")
	resp := core.SearchResponse{Query: req.Query}
	for range 10 {
		resp.Results = append(resp.Results, core.Hit{Resource: r})
	}
	return resp, nil
}

// fakeStamp is a DataStamp over a counter: each write moves the
// generation and the token, and sets the time of the last write.
type fakeStamp struct {
	gen    atomic.Uint64
	mod    atomic.Int64
	stamps atomic.Int64 // calls of Stamp
}

func (s *fakeStamp) Generation() uint64 { return s.gen.Load() }

func (s *fakeStamp) Stamp(context.Context) (string, time.Time, error) {
	s.stamps.Add(1)
	g := s.gen.Load()
	return "t" + string(rune('a'+g%26)), time.Unix(s.mod.Load(), 0), nil
}

// write is what an ingest does to the stamp.
func (s *fakeStamp) write(at time.Time) {
	s.mod.Store(at.Unix())
	s.gen.Add(1)
}

// keptAPI is the API over keptCore with kept answers, validators and the
// access log at warn (as throughput.sh runs the binary).
func keptAPI(tb testing.TB, log *zap.Logger) (*API, *fakeStamp) {
	tb.Helper()
	st := &fakeStamp{}
	st.write(time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC))
	f := &keptCore{}
	f.loaded = true
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: log, Generations: st})
	api.Validators(st, "seed", false)
	return api, st
}

// discard is a ResponseWriter that keeps nothing but, like net/http,
// copies the header map when the status is written.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             { _ = d.h.Clone() }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }

// BenchmarkKept serves kept answers through the whole handler (request
// id, metrics, route, HEAD, compression, validators, kept answers): what a
// repeated request costs the service besides net/http and the socket.
//
//	go test ./adapters/httpapi/ -run '^$' -bench Kept -benchmem
func BenchmarkKept(b *testing.B) {
	// The yardstick of test/perf/throughput.sh, in process: gin in release
	// mode with Recovery answering a short text.
	b.Run("hello", func(b *testing.B) {
		gin.SetMode(gin.ReleaseMode)
		e := gin.New()
		e.Use(gin.Recovery())
		e.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "Hello, World!") })
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		w := &discard{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			clear(w.h)
			e.ServeHTTP(w, req)
		}
	})
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.WarnLevel))
	api, _ := keptAPI(b, log)
	// The same at info, the service's default level: every request writes
	// its access line (JSON, as the binary's, into io.Discard).
	info := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel))
	apiInfo, _ := keptAPI(b, info)
	for _, c := range []struct{ name, target, header, value string }{
		{"lookup", "/api/resources/national:6000000000", "", ""},
		{"lookup-info", "/api/resources/national:6000000000", "", ""},
		{"search", "/api/search?q=sp%C3%A5nskiva", "", ""},
		{"lookup-gzip", "/api/resources/national:6000000000", "Accept-Encoding", "gzip, deflate, br"},
		{"lookup-304", "/api/resources/national:6000000000", "If-None-Match", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			api := api
			if strings.HasSuffix(c.name, "-info") {
				api = apiInfo
			}
			first := httptest.NewRecorder()
			api.ServeHTTP(first, httptest.NewRequest(http.MethodGet, c.target, nil))
			req := httptest.NewRequest(http.MethodGet, c.target, nil)
			want := http.StatusOK
			if c.header == "If-None-Match" {
				req.Header.Set(c.header, first.Header().Get("ETag"))
				want = http.StatusNotModified
			} else if c.header != "" {
				req.Header.Set(c.header, c.value)
			}
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.n = 0
				api.ServeHTTP(w, req)
			}
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			if rec.Code != want {
				b.Fatalf("%s: %d", c.target, rec.Code)
			}
			b.ReportMetric(float64(w.n), "resp-bytes")
		})
	}
}
