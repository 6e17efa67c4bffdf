package prommetrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBuildInfoGauge(t *testing.T) {
	m := New()
	m.SetBuildInfo("v1.2.3", "0123456789ab", "go1.26.0")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	want := `climatesearch_build_info{goversion="go1.26.0",revision="0123456789ab",version="v1.2.3"} 1`
	if !strings.Contains(string(body), want) {
		t.Fatalf("/metrics lacks %s", want)
	}
}
