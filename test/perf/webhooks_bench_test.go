package perf

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/webhooks"
)

// callBody serves one request with a JSON body and requires want.
func callBody(b *testing.B, h http.Handler, method, target, body string, want int) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: %d %.300s", method, target, rec.Code, rec.Body.String())
	}
	return rec
}

var webhookEnv = map[string]string{"SERVICE_WEBHOOK_ALLOW_PRIVATE": "true"}

// BenchmarkWebhookDeliveries measures what the worker sustains to local
// receivers that answer 204 at once: b.N events are published (each one
// store write, as the ingest's are) and the clock stops when every
// destination has received every event and the queue is empty. Each
// delivery is one signed HTTP POST plus one synchronous badger write (the
// attempt and the queue update).
func BenchmarkWebhookDeliveries(b *testing.B) {
	for _, dests := range []int{1, 4} {
		b.Run(fmt.Sprintf("destinations-%d", dests), func(b *testing.B) {
			var got atomic.Int64
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			defer recv.Close()
			var svc *webhooks.Service
			h, stop := bootEnv(b, upstream(b), webhookEnv, fx.Populate(&svc))
			defer stop()
			for i := 0; i < dests; i++ {
				callBody(b, h, http.MethodPost, "/admin/webhooks", fmt.Sprintf(`{"url":%q}`, recv.URL+fmt.Sprintf("/%d", i)), http.StatusCreated)
			}
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				ev := core.NewEvent(core.EventCatalogChanged, core.National, time.Now())
				ev.Counts = &core.EventCounts{Upserted: 1}
				ev.Changes = []core.ResourceChange{{Ref: "national:6000000000", Fields: []string{"a1a3"}}}
				if err := svc.Publish(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
			want := int64(b.N * dests)
			for got.Load() < want || svc.Pending() > 0 {
				time.Sleep(time.Millisecond)
			}
			el := time.Since(start)
			b.StopTimer()
			if got.Load() != want {
				b.Fatalf("received %d deliveries, want %d", got.Load(), want)
			}
			b.ReportMetric(float64(want)/el.Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkIngestWithDeadDestination times a JSON batch that changes one
// resource (so it emits catalog.changed): with no destination, and with a
// destination that accepts connections and never answers (each attempt
// waits out the 10 s timeout). The ingest only writes the outbox, so both
// should take the same time.
func BenchmarkIngestWithDeadDestination(b *testing.B) {
	for _, dead := range []bool{false, true} {
		name := "no-destination"
		if dead {
			name = "dead-destination"
		}
		b.Run(name, func(b *testing.B) {
			h, stop := bootEnv(b, upstream(b), webhookEnv)
			defer stop()
			runIngest(b, h)
			if dead {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				go func() { // accept and hold every connection: a black hole
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						defer c.Close()
					}
				}()
				callBody(b, h, http.MethodPost, "/admin/webhooks", fmt.Sprintf(`{"url":"http://%s/hook"}`, ln.Addr()), http.StatusCreated)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				body := fmt.Sprintf(`{"catalog":"national","resources":[{"id":"9900000001","name":"Provskiva","unit":"kg","a1a3":%d}]}`, i)
				callBody(b, h, http.MethodPost, "/admin/resources", body, http.StatusOK)
			}
		})
	}
}
