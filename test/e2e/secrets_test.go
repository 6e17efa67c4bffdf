package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest/observer"
)

// secretish are the configuration settings whose values must never be
// logged.
var secretish = regexp.MustCompile(`TOKEN|KEY|SECRET`)

// leaked are patterns of secrets whatever their source: webhook signing
// secrets (ours start with whsec_) and credentials of an Authorization
// header.
var leaked = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]{8,}|(?i)(bearer|basic|payment) [A-Za-z0-9._~+/=-]{8,}`)

// checkNoSecrets fails the test when a log line (info and up, the level
// the service runs at) of the run holds a secret: the value of any
// *_TOKEN, *_KEY or *_SECRET setting (8 characters or more), a webhook
// secret or an Authorization credential. The harness runs it after every
// run of every e2e test, so the whole suite proves it.
func checkNoSecrets(t *testing.T, seen *observer.ObservedLogs, settings map[string]string) {
	t.Helper()
	var secrets []string
	for k, v := range settings {
		if secretish.MatchString(k) && len(v) >= 8 {
			secrets = append(secrets, v)
		}
	}
	for _, e := range seen.All() {
		b, _ := json.Marshal(map[string]any{"logger": e.LoggerName, "msg": e.Message, "fields": e.ContextMap()})
		line := string(b)
		for _, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("a log line holds a configured secret: %.300s", line)
			}
		}
		if m := leaked.FindString(line); m != "" {
			t.Errorf("a log line holds a credential (%.12s…): %.300s", m, line)
		}
	}
}

// TestNoSecretInLogs drives the paths that carry secrets (admin token,
// webhook secrets created, rotated and sent, bearer keys on the API) and
// checks the log lines. checkNoSecrets also runs after every other test.
func TestNoSecretInLogs(t *testing.T) {
	const token = "e2e-admin-token-0123456789"
	rcv := newReceiver(t)
	e := newEnv(t, webhookSettings(map[string]string{"SERVICE_ADMIN_TOKEN": token, "SERVICE_LOG_LEVEL": "debug"}))
	admin := map[string]string{"X-Admin-Token": token, "Authorization": "Bearer sk_customer_abcdef123456"}
	b, _ := json.Marshal(map[string]any{"url": rcv.URL, "events": []string{"*"}})
	r := e.do("POST", "/admin/webhooks", b, admin)
	if r.Status != 201 {
		t.Fatalf("create destination: %d %s", r.Status, r.Body)
	}
	var d struct{ ID, Secret string }
	r.json(t, &d)
	if !strings.HasPrefix(d.Secret, "whsec_") {
		t.Fatalf("no secret shown at creation: %s", r.Body)
	}
	e.do("PATCH", "/admin/webhooks/"+d.ID, []byte(`{"rotate_secret":true}`), admin)
	e.do("POST", "/admin/webhooks/"+d.ID+"/test", nil, admin)
	e.do("POST", "/admin/ingest/run?catalog=national", nil, admin)
	e.do("POST", "/admin/ingest/run?catalog=national", nil, map[string]string{"X-Admin-Token": "wrong-" + token})
	e.do("GET", "/api/search?q=betong&key=sk_customer_abcdef123456", nil, admin)
	if e.seen.FilterMessage("http").Len() == 0 {
		t.Fatal("no access log lines seen")
	}
	checkNoSecrets(t, e.seen, e.settings)
	for _, l := range e.seen.All() {
		if strings.Contains(l.Message, d.Secret) || strings.Contains(l.Message, "sk_customer_abcdef123456") {
			t.Errorf("a secret in the message %q", l.Message)
		}
		fields, _ := json.Marshal(l.ContextMap())
		if strings.Contains(string(fields), "sk_customer_abcdef123456") {
			t.Errorf("the key of a query string or an Authorization header in %s", fields)
		}
	}
}
