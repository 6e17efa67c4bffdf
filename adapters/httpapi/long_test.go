package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
)

// slowIngest takes longer to apply a batch than the test server lets any
// request take to be answered.
type slowIngest struct {
	*loadingCore
	took time.Duration
}

func (s slowIngest) ApplyBatch(_ context.Context, b core.ResourceBatch) (core.IngestResult, error) {
	time.Sleep(s.took)
	return core.IngestResult{Catalog: core.CatalogID(b.Catalog), Upserted: len(b.Resources)}, nil
}

// TestAdminIngestOutlivesServerTimeouts: an admin ingest whose body
// arrives slowly and whose apply outlasts the server's read and write
// timeouts still gets its answer (AdminTimeout); without AdminTimeout the
// server cuts it, and other routes keep the server's bounds.
func TestAdminIngestOutlivesServerTimeouts(t *testing.T) {
	const bound = 150 * time.Millisecond // the server's read and write timeouts here
	serve := func(admin time.Duration) *httptest.Server {
		f := &loadingCore{loaded: true}
		api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: slowIngest{f, 3 * bound}, Log: zap.NewNop(), AdminTimeout: admin})
		srv := httptest.NewUnstartedServer(api)
		srv.Config.ReadTimeout, srv.Config.WriteTimeout = bound, bound
		srv.Start()
		t.Cleanup(srv.Close)
		return srv
	}
	// post sends the batch in two parts, the second after the server's
	// read timeout has passed.
	post := func(srv *httptest.Server) (*http.Response, error) {
		pr, pw := io.Pipe()
		go func() {
			io.WriteString(pw, `{"catalog":"dkbr","resources":[`)
			time.Sleep(2 * bound)
			io.WriteString(pw, `{"id":"x1","name":"Beton","unit":"kg","a1a3":1}]}`)
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/admin/resources", pr)
		req.Header.Set("Content-Type", "application/json")
		return srv.Client().Do(req)
	}

	resp, err := post(serve(time.Minute))
	if err != nil {
		t.Fatalf("with AdminTimeout: %v", err)
	}
	var res core.IngestResult
	err = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || res.Upserted != 1 {
		t.Fatalf("with AdminTimeout: status %d, %+v, %v", resp.StatusCode, res, err)
	}

	resp, err = post(serve(0))
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"upserted":1`) {
			t.Fatalf("without AdminTimeout the server's timeouts did not cut the ingest: %s", b)
		}
	}
}
