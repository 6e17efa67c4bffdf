package prommetrics

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// TestScrapedGauges: the gauges read at scrape time show each catalog's
// live and withdrawn resources, vectors, the age of its last ingest (none
// for a catalog never ingested) and the webhook queue with the age of its
// oldest delivery.
func TestScrapedGauges(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	m := New()
	m.Watch(Deps{
		Now: func() time.Time { return now },
		Catalogs: func(context.Context) ([]core.CatalogStatus, error) {
			return []core.CatalogStatus{
				{Catalog: core.CatalogInfo(core.National), Live: 230, Withdrawn: 5, Meta: core.CatalogMeta{LastIngest: now.Add(-90 * time.Second)}},
				{Catalog: core.CatalogInfo(core.DKBR), Live: 0},
			}, nil
		},
		Vectors:      func() map[core.CatalogID]int { return map[core.CatalogID]int{core.National: 229} },
		WebhookQueue: func() (int, time.Time) { return 3, now.Add(-time.Hour) },
	})
	m.ObserveSearch("fulltext", 7, time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`climatesearch_catalog_resources{catalog="national",state="live"} 230`,
		`climatesearch_catalog_resources{catalog="national",state="withdrawn"} 5`,
		`climatesearch_catalog_resources{catalog="dkbr",state="live"} 0`,
		`climatesearch_catalog_vectors{catalog="national"} 229`,
		`climatesearch_catalog_vectors{catalog="dkbr"} 0`,
		`climatesearch_catalog_last_ingest_age_seconds{catalog="national"} 90`,
		`climatesearch_webhook_queue_depth 3`,
		`climatesearch_webhook_oldest_pending_age_seconds 3600`,
		`climatesearch_search_results_sum{mode="fulltext"} 7`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
	if strings.Contains(body, `climatesearch_catalog_last_ingest_age_seconds{catalog="dkbr"}`) {
		t.Errorf("an ingest age for a catalog never ingested")
	}
}

// BenchmarkObserveRequest is what the metrics add to one search request:
// the HTTP counter and histogram and the search histograms.
func BenchmarkObserveRequest(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveHTTP("/api/search", "GET", 200, 300*time.Microsecond)
		m.ObserveSearch("fulltext", 10, 250*time.Microsecond)
	}
}
