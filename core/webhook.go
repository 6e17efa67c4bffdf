package core

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// ServiceName announces the service in events and chat messages.
const ServiceName = "climatesearch"

// EventWebhookTest is sent on demand to one destination; nobody subscribes to it.
const EventWebhookTest EventType = "webhook.test"

// SubscribableEvents are the events a destination can filter on.
var SubscribableEvents = []EventType{EventCatalogChanged, EventCatalogUnreachable, EventIngestFailed}

// MaxEventChanges caps the resources one event lists; the rest are counted
// in ChangesOmitted so a 10,000-resource release stays a small request.
const MaxEventChanges = 100

// Event is a domain event: what the ingest tells the outside world. Its JSON
// form is the body of generic webhook deliveries (documented in
// /openapi.yaml as WebhookEvent).
type Event struct {
	// ID is unique and stays the same across retries (the webhook-id header).
	ID           string       `json:"id"`
	Type         EventType    `json:"type"`
	OccurredAt   time.Time    `json:"occurred_at"`
	Service      string       `json:"service"`
	Catalog      CatalogID    `json:"catalog,omitempty"`
	Version      string       `json:"version,omitempty"`
	IngestOrigin IngestOrigin `json:"ingest_origin,omitempty"`
	Counts       *EventCounts `json:"counts,omitempty"`
	// Changes lists new, changed and withdrawn resources with the fields
	// that changed, at most MaxEventChanges of them.
	Changes        []ResourceChange `json:"changes,omitempty"`
	ChangesOmitted int              `json:"changes_omitted,omitempty"`
	Error          string           `json:"error,omitempty"`
	Message        string           `json:"message,omitempty"`
	// Source cites the publisher of the catalog.
	Source string `json:"source,omitempty"`
}

// EventCounts are the counts of the IngestResult behind an event.
type EventCounts struct {
	Seen      int `json:"seen"`
	Upserted  int `json:"upserted"`
	Unchanged int `json:"unchanged"`
	Rejected  int `json:"rejected"`
	Skipped   int `json:"skipped"`
	Withdrawn int `json:"withdrawn"`
}

// CountsOf copies the counts of an ingest result.
func CountsOf(r IngestResult) *EventCounts {
	return &EventCounts{Seen: r.Seen, Upserted: r.Upserted, Unchanged: r.Unchanged, Rejected: r.Rejected, Skipped: r.Skipped, Withdrawn: r.Withdrawn}
}

// NewEvent starts an event of a catalog with a fresh id and the catalog's
// source attribution.
func NewEvent(t EventType, catalog CatalogID, at time.Time) Event {
	ev := Event{ID: NewEventID(at), Type: t, OccurredAt: at.UTC().Truncate(time.Millisecond), Service: ServiceName, Catalog: catalog}
	if catalog != "" {
		ev.Source = SourceFor([]CatalogID{catalog})
	}
	return ev
}

// NewEventID returns "evt_" + 12 hex digits of Unix milliseconds + 16 random
// hex digits: unique, and in time order when sorted.
func NewEventID(at time.Time) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("evt_%012x%s", at.UnixMilli(), hex.EncodeToString(b))
}

// Summary is the one-line rendering chat destinations receive:
// "<service> <event>: <details>".
func (ev Event) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", ev.Service, ev.Type)
	switch ev.Type {
	case EventCatalogChanged:
		fmt.Fprintf(&b, "catalog %s", ev.Catalog)
		if ev.Version != "" {
			fmt.Fprintf(&b, " version %s", ev.Version)
		}
		if ev.IngestOrigin != "" {
			fmt.Fprintf(&b, " (from %s)", ev.IngestOrigin)
		}
		if c := ev.Counts; c != nil {
			fmt.Fprintf(&b, ": %d new or changed, %d withdrawn, %d unchanged", c.Upserted, c.Withdrawn, c.Unchanged)
		}
		if len(ev.Changes) > 0 {
			const show = 5
			b.WriteString(". Changed: ")
			for i, ch := range ev.Changes {
				if i == show {
					break
				}
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(ch.Ref)
				switch {
				case ch.New:
					b.WriteString(" (new)")
				case len(ch.Fields) > 0:
					fmt.Fprintf(&b, " (%s)", strings.Join(ch.Fields, ", "))
				}
			}
			if more := len(ev.Changes) - show + ev.ChangesOmitted; more > 0 {
				fmt.Fprintf(&b, " and %d more", more)
			}
		}
	case EventCatalogUnreachable, EventIngestFailed:
		fmt.Fprintf(&b, "catalog %s: %s", ev.Catalog, ev.Error)
	default:
		b.WriteString(ev.Message)
	}
	b.WriteString(".")
	if ev.Source != "" {
		fmt.Fprintf(&b, " Source: %s", ev.Source)
	}
	return b.String()
}

// WebhookKind decides the body a destination receives.
type WebhookKind string

const (
	WebhookGeneric WebhookKind = "generic" // the JSON Event, signed
	WebhookText    WebhookKind = "text"    // {"text": summary}: Slack, Google Chat, Teams, Mattermost
	WebhookContent WebhookKind = "content" // {"content": summary}: Discord
)

// ParseWebhookKind validates a kind; empty means "detect from the URL".
func ParseWebhookKind(s string) (WebhookKind, error) {
	switch k := WebhookKind(strings.ToLower(strings.TrimSpace(s))); k {
	case "", WebhookGeneric, WebhookText, WebhookContent:
		return k, nil
	}
	return "", Invalidf("unknown webhook kind %q: use generic, text or content", s)
}

// DetectWebhookKind guesses the kind from well-known chat hosts; anything
// else gets the signed JSON Event.
func DetectWebhookKind(rawURL string) WebhookKind {
	u, err := url.Parse(rawURL)
	if err != nil {
		return WebhookGeneric
	}
	host := strings.ToLower(u.Hostname())
	is := func(domain string) bool { return host == domain || strings.HasSuffix(host, "."+domain) }
	switch {
	case is("hooks.slack.com"), is("chat.googleapis.com"), is("webhook.office.com"), is("outlook.office.com"),
		is("office.com") && strings.Contains(u.Path, "webhook"),
		strings.Contains(u.Path, "/hooks/") && strings.Contains(host, "mattermost"):
		return WebhookText
	case is("discord.com"), is("discordapp.com"):
		return WebhookContent
	}
	return WebhookGeneric
}

// Destination is where events are delivered.
type Destination struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Events filters what is delivered; empty means every subscribable event.
	Events []EventType `json:"events"`
	// Secret signs generic deliveries (Standard Webhooks, "whsec_" + base64).
	// Answers show it once, at creation or rotation, and masked afterwards.
	Secret      string      `json:"secret"`
	Enabled     bool        `json:"enabled"`
	Kind        WebhookKind `json:"kind"`
	Description string      `json:"description,omitempty"`
	// Static marks a destination from SERVICE_WEBHOOK_URL: not stored, not editable.
	Static    bool      `json:"static,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Wants tells whether the destination receives events of type t.
func (d Destination) Wants(t EventType) bool {
	if !d.Enabled || t == EventWebhookTest {
		return false
	}
	return len(d.Events) == 0 || slices.Contains(d.Events, t)
}

// Masked returns the destination with its secret masked.
func (d Destination) Masked() Destination {
	d.Secret = MaskSecret(d.Secret)
	d.Events = append([]EventType(nil), d.Events...)
	return d
}

// MaskSecret keeps the prefix and the last four characters.
func MaskSecret(s string) string {
	if s == "" {
		return ""
	}
	tail := ""
	if len(s) > 16 {
		tail = s[len(s)-4:]
	}
	return "whsec_…" + tail
}

// SecretPrefix starts every signing secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: 24 random bytes.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ParseSecret validates a signing secret: "whsec_" and the base64 of 24 to
// 64 bytes. It returns the key bytes.
func ParseSecret(s string) ([]byte, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(s), SecretPrefix)
	if !ok {
		return nil, Invalidf("a webhook secret starts with %q followed by base64 (e.g. %s)", SecretPrefix, "whsec_"+strings.Repeat("A", 32))
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, Invalidf("the webhook secret after %q is not standard base64: %v", SecretPrefix, err)
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, Invalidf("the webhook secret holds %d bytes; use 24 to 64 random bytes", len(key))
	}
	return key, nil
}

// ParseEventTypes validates a destination's filter; "*" or nothing means all.
func ParseEventTypes(in []string) ([]EventType, error) {
	var out []EventType
	seen := map[EventType]bool{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "*" {
			return nil, nil
		}
		t := EventType(s)
		if !slices.Contains(SubscribableEvents, t) {
			return nil, Invalidf("unknown event %q: use catalog.changed, catalog.unreachable, ingest.failed or * (webhook.test is sent on demand only)", s)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == len(SubscribableEvents) {
		return nil, nil
	}
	return out, nil
}

// DestinationInput is the body of POST and PATCH /admin/webhooks; nil
// fields are left as they are (PATCH) or defaulted (POST).
type DestinationInput struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Secret      *string   `json:"secret"`
	Enabled     *bool     `json:"enabled"`
	Kind        *string   `json:"kind"`
	Description *string   `json:"description"`
	// RotateSecret replaces the secret with a fresh one (PATCH).
	RotateSecret bool `json:"rotate_secret"`
}

// Webhook limits.
const (
	MaxDestinations     = 100
	MaxWebhookURL       = 2048
	MaxWebhookDescr     = 200
	MaxDeliveryLog      = 200 // attempts kept per destination
	DefaultDeliveryList = 50
	DefaultEventList    = 20 // events listed by GET /admin/events
)

// Delivery is one event queued for one destination: a row of the outbox.
type Delivery struct {
	Event         Event  `json:"event"`
	DestinationID string `json:"destination_id"`
	// Attempts made so far.
	Attempts int `json:"attempts"`
	// QueuedAt starts the retry window.
	QueuedAt    time.Time `json:"queued_at"`
	NextAttempt time.Time `json:"next_attempt"`
}

// DeliveryStatus is the outcome of one attempt.
type DeliveryStatus string

const (
	DeliveryDelivered DeliveryStatus = "delivered" // a 2xx answer
	DeliveryRetrying  DeliveryStatus = "retrying"  // failed; another attempt is scheduled
	DeliveryFailed    DeliveryStatus = "failed"    // failed for good: 4xx, or the retry window ended
)

// DeliveryAttempt is one line of a destination's delivery log.
type DeliveryAttempt struct {
	At           time.Time      `json:"at"`
	EventID      string         `json:"event_id"`
	EventType    EventType      `json:"event_type"`
	Attempt      int            `json:"attempt"`
	Status       DeliveryStatus `json:"status"`
	DurationMS   float64        `json:"duration_ms"`
	ResponseCode int            `json:"response_code,omitempty"`
	Error        string         `json:"error,omitempty"`
	NextAttempt  time.Time      `json:"next_attempt,omitzero"`
	// Response is the start of the receiver's answer body (at most
	// MaxResponseExcerpt bytes of valid UTF-8), so an operator sees what
	// the receiver said.
	Response string `json:"response,omitempty"`
}

// MaxResponseExcerpt bounds the receiver's answer kept with an attempt.
const MaxResponseExcerpt = 512

// DeliveryLog is the answer of GET /admin/webhooks/{id}/deliveries.
type DeliveryLog struct {
	DestinationID string `json:"destination_id"`
	// Pending counts deliveries queued for the destination.
	Pending  int               `json:"pending"`
	Attempts []DeliveryAttempt `json:"attempts"`
}

// SendResult is what one delivery attempt got back.
type SendResult struct {
	// Code is the HTTP status, 0 when no answer came.
	Code int
	// Body is the start of the answer body, at most MaxResponseExcerpt bytes.
	Body string
	// RetryAfter is the receiver's Retry-After, when it sent one.
	RetryAfter time.Duration
	Duration   time.Duration
	// Err is a network failure, a timeout or a refused address.
	Err error
	// Refused marks an address the sender will not call (private, loopback,
	// metadata): retrying would not help.
	Refused bool
}
