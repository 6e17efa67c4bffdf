package webhooks_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// The running service's own deliveries verify in the Node receiver: a
// webhook.test sent through the admin API and the catalog.changed of a
// JSON batch, to a SERVICE_WEBHOOK_URL destination.
func TestServiceDeliveriesVerifyInNode(t *testing.T) {
	secret := core.NewSecret()
	hookURL, lines := startReceiver(t, secret)
	bin, _, cleanup, err := testbin.Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"SERVICE_ADDR="+addr, "SERVICE_DATA_DIR="+t.TempDir(), "SERVICE_LOG_FORMAT=json", "SERVICE_LOG_LEVEL=warn",
		"SERVICE_BOOT_INGEST=false", "SERVICE_INGEST_INTERVAL=0",
		"SERVICE_WEBHOOK_URL="+hookURL, "SERVICE_WEBHOOK_SECRET="+secret, "SERVICE_WEBHOOK_ALLOW_PRIVATE=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("service stderr:\n%s", stderr.String())
		}
	})
	base := "http://" + addr
	// Ready, not only healthy: the batch below is refused while the index
	// still loads after the start.
	if err := testbin.WaitReady(base, nil, 30*time.Second); err != nil {
		t.Fatalf("the service did not become ready: %v", err)
	}

	var list struct{ Destinations []core.Destination }
	getJSON(t, base+"/admin/webhooks", &list)
	if len(list.Destinations) != 1 || !list.Destinations[0].Static {
		t.Fatalf("destinations: %+v", list.Destinations)
	}
	id := list.Destinations[0].ID

	var a core.DeliveryAttempt
	postJSON(t, base+"/admin/webhooks/"+id+"/test", "", &a)
	if a.Status != core.DeliveryDelivered || a.ResponseCode != http.StatusNoContent {
		t.Fatalf("test delivery: %+v", a)
	}
	if v := nextVerdict(t, lines); !v.Valid || v.ID != a.EventID || v.Type != string(core.EventWebhookTest) {
		t.Fatalf("the Node receiver on the test delivery: %+v", v)
	}

	var res core.IngestResult
	postJSON(t, base+"/admin/resources", `{"catalog":"national","resources":[{"id":"9900000001","name":"Provskiva","unit":"kg","a1a3":1.5}]}`, &res)
	if res.Upserted != 1 {
		t.Fatalf("batch: %+v", res)
	}
	if v := nextVerdict(t, lines); !v.Valid || v.Type != string(core.EventCatalogChanged) || !strings.HasPrefix(v.ID, "evt_") {
		t.Fatalf("the Node receiver on catalog.changed: %+v", v)
	}
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	decode(t, resp, out)
}

func postJSON(t *testing.T, url, body string, out any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	decode(t, resp, out)
}

func decode(t *testing.T, resp *http.Response, out any) {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", b, err))
	}
}
