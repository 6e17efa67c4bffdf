// Package prommetrics implements ports.Metrics with the Prometheus client
// (client_golang) and serves /metrics in the Prometheus text format:
// requests, searches, ingests, MCP tool calls and webhook attempts as they
// happen; catalog sizes, vectors, the age of each catalog's last ingest and
// the webhook queue read at scrape time; the Go runtime and the process.
package prommetrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

const namespace = "climatesearch"

// Deps are what the gauges read at scrape time; each may be nil (its
// metrics are then absent).
type Deps struct {
	// Catalogs returns each catalog's live and withdrawn counts and its
	// metadata (the time of the last successful ingest).
	Catalogs func(ctx context.Context) ([]core.CatalogStatus, error)
	// Vectors counts the vectors in the vector index per catalog; nil
	// without an embedder.
	Vectors func() map[core.CatalogID]int
	// WebhookQueue returns the deliveries pending and when the oldest of
	// them was queued (zero when none).
	WebhookQueue func() (pending int, oldest time.Time)
	// Now is the clock of the ages (time.Now when nil).
	Now func() time.Time
}

// Metrics records observations and serves them.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
	searchDuration  *prometheus.HistogramVec
	searchResults   *prometheus.HistogramVec
	ingests         *prometheus.CounterVec
	ingestDuration  *prometheus.HistogramVec
	toolCalls       *prometheus.CounterVec
	webhookAttempts *prometheus.CounterVec

	// httpSeries holds the series of each route, method and status seen:
	// resolving the label values of a vector on every request (hashing,
	// a map lookup, formatting the status) was a measurable part of a
	// kept answer. Bounded like the labels (routes are templates).
	httpSeries sync.Map // httpKey -> httpSeries
}

type httpKey struct {
	route, method string
	status        int
}

type httpSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

var _ ports.Metrics = (*Metrics)(nil)

// latencyBuckets suit answers from a tenth of a millisecond (a kept
// answer) to seconds (a reranked search, a large listing).
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New returns the metrics with their collectors registered, the Go
// runtime and process collectors included; Watch adds the gauges read at
// scrape time.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests by route template, method and status.",
		}, []string{"route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by route template and method.", Buckets: latencyBuckets,
		}, []string{"route", "method"}),
		searchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "search_duration_seconds",
			Help: "Time the core took to answer a search (REST or MCP; kept REST answers are not searched again), by mode: fulltext, hybrid, reranked.", Buckets: latencyBuckets,
		}, []string{"mode"}),
		searchResults: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "search_results",
			Help: "Hits on the page a search answered, by mode.", Buckets: []float64{0, 1, 3, 5, 10, 20, 50, 100},
		}, []string{"mode"}),
		ingests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "ingests_total",
			Help: "Ingests by catalog, origin (json, excel, fixture, file; upstream when no source answered) and outcome (ok, refused, failed).",
		}, []string{"catalog", "origin", "outcome"}),
		ingestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "ingest_duration_seconds",
			Help: "Duration of an ingest, by catalog, origin and outcome.", Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"catalog", "origin", "outcome"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "mcp_tool_calls_total",
			Help: "MCP tool calls by tool and outcome (ok, tool_error, failed).",
		}, []string{"tool", "outcome"}),
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome (delivered, retrying, failed).",
		}, []string{"outcome"}),
	}
	// Series that exist from the start, at 0, so rates and alerts work
	// before the first event.
	for _, mode := range []string{ports.SearchFullText, ports.SearchHybrid, ports.SearchReranked} {
		m.searchDuration.WithLabelValues(mode)
		m.searchResults.WithLabelValues(mode)
	}
	for _, o := range []core.DeliveryStatus{core.DeliveryDelivered, core.DeliveryRetrying, core.DeliveryFailed} {
		m.webhookAttempts.WithLabelValues(string(o))
	}
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.searchDuration, m.searchResults, m.ingests, m.ingestDuration,
		m.toolCalls, m.webhookAttempts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Watch registers the gauges read at scrape time from d; call it once,
// before serving.
func (m *Metrics) Watch(d Deps) {
	if d.Now == nil {
		d.Now = time.Now
	}
	m.reg.MustRegister(&scraped{d: d})
}

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics when asked).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})
}

// Registry is the registry behind Handler (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveHTTP implements ports.Metrics.
func (m *Metrics) ObserveHTTP(route, method string, status int, d time.Duration) {
	k := httpKey{route, method, status}
	v, ok := m.httpSeries.Load(k)
	if !ok {
		v, _ = m.httpSeries.LoadOrStore(k, httpSeries{
			requests: m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)),
			duration: m.httpDuration.WithLabelValues(route, method),
		})
	}
	hs := v.(httpSeries)
	hs.requests.Inc()
	hs.duration.Observe(d.Seconds())
}

// ObserveSearch implements ports.Metrics.
func (m *Metrics) ObserveSearch(mode string, results int, d time.Duration) {
	m.searchDuration.WithLabelValues(mode).Observe(d.Seconds())
	m.searchResults.WithLabelValues(mode).Observe(float64(results))
}

// ObserveIngest implements ports.Metrics.
func (m *Metrics) ObserveIngest(catalog, origin, outcome string, d time.Duration) {
	m.ingests.WithLabelValues(catalog, origin, outcome).Inc()
	m.ingestDuration.WithLabelValues(catalog, origin, outcome).Observe(d.Seconds())
}

// ObserveToolCall implements ports.Metrics.
func (m *Metrics) ObserveToolCall(tool, outcome string) {
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
}

// ObserveWebhookAttempt implements ports.Metrics.
func (m *Metrics) ObserveWebhookAttempt(outcome string) {
	m.webhookAttempts.WithLabelValues(outcome).Inc()
}

// scraped reads the state gauges when Prometheus scrapes.
type scraped struct{ d Deps }

var (
	resourcesDesc = prometheus.NewDesc(namespace+"_catalog_resources",
		"Resources stored per catalog, live or withdrawn.", []string{"catalog", "state"}, nil)
	vectorsDesc = prometheus.NewDesc(namespace+"_catalog_vectors",
		"Vectors in the vector index per catalog.", []string{"catalog"}, nil)
	ingestAgeDesc = prometheus.NewDesc(namespace+"_catalog_last_ingest_age_seconds",
		"Seconds since the catalog's last successful ingest (absent when it never had one).", []string{"catalog"}, nil)
	queueDesc = prometheus.NewDesc(namespace+"_webhook_queue_depth",
		"Webhook deliveries pending (queued or waiting for a retry).", nil, nil)
	oldestDesc = prometheus.NewDesc(namespace+"_webhook_oldest_pending_age_seconds",
		"Seconds since the oldest pending webhook delivery was queued (0 when none is pending).", nil, nil)
)

func (s *scraped) Describe(ch chan<- *prometheus.Desc) {
	ch <- resourcesDesc
	ch <- vectorsDesc
	ch <- ingestAgeDesc
	ch <- queueDesc
	ch <- oldestDesc
}

func (s *scraped) Collect(ch chan<- prometheus.Metric) {
	now := s.d.Now()
	if s.d.Catalogs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sts, err := s.d.Catalogs(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(resourcesDesc, err)
		}
		for _, st := range sts {
			c := string(st.Catalog.ID)
			ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(st.Live), c, "live")
			ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(st.Withdrawn), c, "withdrawn")
			if !st.Meta.LastIngest.IsZero() {
				ch <- prometheus.MustNewConstMetric(ingestAgeDesc, prometheus.GaugeValue, max(0, now.Sub(st.Meta.LastIngest).Seconds()), c)
			}
		}
	}
	if s.d.Vectors != nil {
		n := s.d.Vectors()
		for _, c := range core.Catalogs {
			ch <- prometheus.MustNewConstMetric(vectorsDesc, prometheus.GaugeValue, float64(n[c]), string(c))
		}
	}
	if s.d.WebhookQueue != nil {
		pending, oldest := s.d.WebhookQueue()
		age := 0.0
		if pending > 0 && !oldest.IsZero() {
			age = max(0, now.Sub(oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(pending))
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
	}
}
