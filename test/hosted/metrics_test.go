package hosted

import (
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/keyfile"
)

// TestMetricsBehindTheAdminToken: the hosted binary serves /metrics on the
// main listener to the admin token only (a customer key does not open it),
// and the guard's refusals carry a request id and are counted under the
// route "unmatched".
func TestMetricsBehindTheAdminToken(t *testing.T) {
	env := baseEnv(t)
	env["SERVICE_API_KEYS_FILE"] = writeFile(t, keyfile.Line("acme", "sk_acme_1")+"\n")
	p := start(t, env)
	for _, h := range [][]string{nil, {"Authorization", "Bearer sk_acme_1"}, {"X-Admin-Token", "wrong"}} {
		if a := do(t, "GET", p.URL+"/metrics", "", h...); a.Status != 401 || a.Header.Get("X-Request-Id") == "" {
			t.Errorf("/metrics with %v: %d (request id %q)", h, a.Status, a.Header.Get("X-Request-Id"))
		}
	}
	a := do(t, "GET", p.URL+"/metrics", "", "X-Admin-Token", adminToken)
	if a.Status != 200 || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(a.Body, `climatesearch_http_requests_total{method="GET",route="unmatched",status="401"} 3`) {
		t.Fatalf("/metrics with the admin token: %d %s\n%.2000s", a.Status, a.Header.Get("Content-Type"), a.Body)
	}
}
