package core

import (
	"sort"
	"strings"
	"testing"
	"time"
)

func TestEventIDsAreUniqueAndTimeOrdered(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	var ids []string
	for i := range 1000 {
		id := NewEventID(at.Add(time.Duration(i) * time.Millisecond))
		if seen[id] || !strings.HasPrefix(id, "evt_") {
			t.Fatalf("id %q", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids must sort in time order (the outbox is scanned oldest first)")
	}
}

func TestSummary(t *testing.T) {
	ev := NewEvent(EventCatalogChanged, National, time.Now())
	ev.Version, ev.IngestOrigin = "02.07.000", OriginJSON
	ev.Counts = &EventCounts{Upserted: 7, Withdrawn: 1, Unchanged: 200}
	for i := range 6 {
		ev.Changes = append(ev.Changes, ResourceChange{Ref: "national:60000000" + string(rune('0'+i)), Fields: []string{"a1a3"}})
	}
	ev.ChangesOmitted = 2
	got := ev.Summary()
	for _, want := range []string{"climatesearch catalog.changed: catalog national version 02.07.000 (from json)", "7 new or changed, 1 withdrawn, 200 unchanged",
		"national:600000000 (a1a3)", "and 3 more", "Source: Boverket"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	u := NewEvent(EventCatalogUnreachable, National, time.Now())
	u.Error = "json: 503; excel: 503"
	if got := u.Summary(); !strings.HasPrefix(got, "climatesearch catalog.unreachable: catalog national: json: 503; excel: 503.") {
		t.Errorf("unreachable summary %q", got)
	}
}

func TestDetectWebhookKind(t *testing.T) {
	for u, want := range map[string]WebhookKind{
		"https://hooks.slack.com/services/T/B/x":                   WebhookText,
		"https://chat.googleapis.com/v1/spaces/AAA/messages?key=k": WebhookText,
		"https://acme.webhook.office.com/webhookb2/x":              WebhookText,
		"https://mattermost.acme.se/hooks/abc":                     WebhookText,
		"https://discord.com/api/webhooks/1/x":                     WebhookContent,
		"https://discordapp.com/api/webhooks/1/x":                  WebhookContent,
		"https://notdiscord.com/api/webhooks/1/x":                  WebhookGeneric,
		"https://hooks.slack.com.evil.example/services":            WebhookGeneric,
		"https://lca.example.org/climatesearch":                    WebhookGeneric,
		"::not a url":                                              WebhookGeneric,
	} {
		if got := DetectWebhookKind(u); got != want {
			t.Errorf("%s: %q, want %q", u, got, want)
		}
	}
}

func TestSecrets(t *testing.T) {
	s := NewSecret()
	key, err := ParseSecret(s)
	if err != nil || len(key) != 24 {
		t.Fatalf("%s: %v", s, err)
	}
	if NewSecret() == s {
		t.Fatal("secrets repeat")
	}
	for _, bad := range []string{"", "hunter2", "whsec_!!!", "whsec_" + "QUJD", "whsec_" + strings.Repeat("QUJD", 30)} {
		if _, err := ParseSecret(bad); KindOf(err) != KindInvalid {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if m := MaskSecret(s); strings.Contains(m, s[6:20]) || !strings.HasPrefix(m, "whsec_…") || !strings.HasSuffix(s, m[len("whsec_…"):]) {
		t.Errorf("mask %q of %q", m, s)
	}
}

func TestParseEventTypes(t *testing.T) {
	if got, err := ParseEventTypes([]string{"catalog.changed", "catalog.changed"}); err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	for _, all := range [][]string{nil, {"*"}, {"catalog.changed", "catalog.unreachable", "ingest.failed"}} {
		if got, err := ParseEventTypes(all); err != nil || got != nil {
			t.Fatalf("%v: %v %v", all, got, err)
		}
	}
	for _, bad := range [][]string{{"webhook.test"}, {"catalog.changed", "nope"}} {
		if _, err := ParseEventTypes(bad); KindOf(err) != KindInvalid {
			t.Fatalf("%v: %v", bad, err)
		}
	}
	d := Destination{Enabled: true, Events: []EventType{EventIngestFailed}}
	if d.Wants(EventCatalogChanged) || !d.Wants(EventIngestFailed) || d.Wants(EventWebhookTest) {
		t.Fatal("filter")
	}
	d.Enabled = false
	if d.Wants(EventIngestFailed) {
		t.Fatal("a disabled destination wants nothing")
	}
}
