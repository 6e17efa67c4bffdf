// Package webhooks_test checks the service's signatures against the
// reference Standard Webhooks JavaScript library (receiver.mjs), so a
// receiver written with any official library accepts our deliveries: the
// sender adapter's directly, and the running binary's end to end.
package webhooks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/webhooksender"
	"github.com/climatesearch/climatesearch/core"
)

// verdict is a line the receiver prints per request.
type verdict struct {
	Valid bool   `json:"valid"`
	ID    string `json:"id"`
	Type  string `json:"type"`
	Error string `json:"error"`
}

// startReceiver runs receiver.mjs with the secret and returns its URL and
// its output lines after the port.
func startReceiver(t *testing.T, secret string) (string, <-chan string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: install Node.js 20 or later to run the cross-language webhook check: %v", err)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "standardwebhooks", "package.json")); err != nil {
		t.Fatalf("test/webhooks/node_modules lacks standardwebhooks: run `npm ci` in test/webhooks (test/suite.sh does it): %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, "receiver.mjs", "0")
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret) // not in argv, where ps shows it
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the receiver: %v", err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range lines { // stdout must be read to the end before Wait
		}
		_ = cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("receiver stderr:\n%s", stderr.String())
		}
	})
	port := next(t, lines)
	return "http://127.0.0.1:" + port + "/hook", lines
}

func next(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the receiver exited")
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver printed nothing for 30s")
	}
	return ""
}

func nextVerdict(t *testing.T, lines <-chan string) verdict {
	t.Helper()
	l := next(t, lines)
	var v verdict
	if err := json.Unmarshal([]byte(l), &v); err != nil {
		t.Fatalf("receiver line %q: %v", l, err)
	}
	return v
}

func TestStandardWebhooksReceiverVerifiesDeliveries(t *testing.T) {
	secret := core.NewSecret()
	url, lines := startReceiver(t, secret)
	sender := webhooksender.New(webhooksender.Config{AllowPrivate: true})
	ctx := context.Background()

	ev := core.NewEvent(core.EventWebhookTest, "", time.Now())
	ev.Message = "cross-language check — åäö ✓ <&>" // non-ASCII and HTML-escaped bytes are signed as sent
	d := core.Destination{ID: "wh_test", URL: url, Secret: secret, Kind: core.WebhookGeneric, Enabled: true}

	res := sender.Send(ctx, d, ev)
	if res.Err != nil || res.Code != http.StatusNoContent {
		t.Fatalf("Send = %+v, want 204 from the receiver", res)
	}
	if v := nextVerdict(t, lines); !v.Valid || v.ID != ev.ID || v.Type != string(ev.Type) {
		t.Errorf("receiver: %+v, want valid with id %s and type %s", v, ev.ID, ev.Type)
	}

	d.Secret = core.NewSecret() // signed with a key the receiver does not hold
	res = sender.Send(ctx, d, ev)
	if res.Err != nil || res.Code != http.StatusBadRequest {
		t.Fatalf("Send with another secret = %+v, want 400 from the receiver", res)
	}
	if v := nextVerdict(t, lines); v.Valid || v.Error == "" {
		t.Errorf("receiver: %+v, want invalid with an error", v)
	}
}
