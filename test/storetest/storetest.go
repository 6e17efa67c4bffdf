// Package storetest is the contract of the store ports, run against every
// store (adapters/badgerstore, adapters/pgstore): their test files call Run
// with a way to open a store on fresh data. What only one store can show
// (badger's transaction limit and crash recovery, PostgreSQL's counter,
// change feed and locks) stays in that store's own tests.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Store is every store port the core uses, with the key-value methods and
// Close. Of ports.WebhookStore it names the methods this contract tests
// (the claims of a shared queue are tested where they are implemented).
type Store interface {
	ports.ResourceStore
	ports.VectorStore
	ports.FileStash
	ports.PaymentLedger
	Webhooks
	PutTTL(ctx context.Context, key string, value []byte, ttl time.Duration) error
	GetKV(ctx context.Context, key string) (value []byte, ok bool, err error)
	DeleteKV(ctx context.Context, key string) error
	TakeKV(ctx context.Context, key string) (value []byte, ok bool, err error)
	Close() error
}

// Webhooks is the part of ports.WebhookStore under this contract.
type Webhooks interface {
	Destinations(ctx context.Context) ([]core.Destination, error)
	Destination(ctx context.Context, id string) (d core.Destination, found bool, err error)
	PutDestination(ctx context.Context, d core.Destination) error
	DeleteDestination(ctx context.Context, id string) error
	RecordEvent(ctx context.Context, ev core.Event) error
	Outbox(ctx context.Context) ([]core.Event, error)
	FanOut(ctx context.Context, eventID string, ds []core.Delivery) error
	Queue(ctx context.Context) ([]core.Delivery, error)
	Finish(ctx context.Context, d core.Delivery, a core.DeliveryAttempt, requeue bool) error
	Attempts(ctx context.Context, destinationID string, limit int) ([]core.DeliveryAttempt, error)
	History(ctx context.Context, limit int) ([]core.Event, error)
}

// Backend is one body of data (a directory, a database) that stores are
// opened on.
type Backend struct {
	// Open opens a store on the backend's data: a store opened after
	// another was closed sees everything the other wrote. The test closes
	// what it opens.
	Open func(t *testing.T) Store
	// StoredHistory counts the events the store keeps in its history,
	// which may be more than History returns.
	StoredHistory func(t *testing.T, s Store) int
	// HistorySlack is how many events beyond core.MaxEventHistory the
	// history may keep between two trims of one store.
	HistorySlack int
}

// Run runs every test of the contract, each on a backend of its own from
// newBackend.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"RoundTrip", testRoundTrip},
		{"ScanStopsOnError", testScanStopsOnError},
		{"ApplyAtomic", testApplyAtomic},
		{"ApplyMaxBatch", testApplyMaxBatch},
		{"ApplyRepeatedID", testApplyRepeatedID},
		{"ApplyLargerThanOneBadgerTransaction", testApplyLarge},
		{"Closed", testClosed},
		{"KVTTL", testKVTTL},
		{"KVDelete", testKVDelete},
		{"ConsoleSessions", testConsoleSessions},
		{"KVTake", testKVTake},
		{"ConsoleFlashes", testConsoleFlashes},
		{"ReadsFollowCommits", testReadsFollowCommits},
		{"Vectors", testVectors},
		{"States", testStates},
		{"Stash", testStash},
		{"LedgerSpendsOnce", testLedgerSpendsOnce},
		{"LedgerSurvivesReopen", testLedgerSurvivesReopen},
		{"LedgerRemembersExpiredChallenges", testLedgerRemembersExpired},
		{"LedgerConcurrentSpends", testLedgerConcurrentSpends},
		{"WebhookDestinations", testWebhookDestinations},
		{"WebhookOutboxIdempotent", testWebhookOutboxIdempotent},
		{"WebhookFanOutRace", testWebhookFanOutRace},
		{"ApplyWithEvents", testApplyWithEvents},
		{"WebhookFinish", testWebhookFinish},
		{"WebhookLogTrim", testWebhookLogTrim},
		{"WebhookDurable", testWebhookDurable},
		{"WebhookFinishConcurrent", testWebhookFinishConcurrent},
		{"WebhookHistory", testWebhookHistory},
		{"WebhookHistoryCapAndReopen", testWebhookHistoryCapAndReopen},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newBackend(t)) })
	}
}

// open opens a store on b and closes it when the test ends (a second
// Close is a no-op for every store).
func open(t *testing.T, b Backend) Store {
	t.Helper()
	s := b.Open(t)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Full returns a resource with every field set, so a field a store drops
// or mangles shows up in a DeepEqual.
func Full(c core.CatalogID, id string) ports.StoredResource {
	r := core.Resource{
		ID: id, Catalog: c,
		Name: "Betong", Description: "Betong C30/37",
		NameSV: "Betong", NameEN: "Concrete", NameDA: "Beton",
		DescriptionSV: "Betong C30/37, husbyggnad", DescriptionEN: "Concrete C30/37, buildings", DescriptionDA: "Beton C30/37",
		ApplicabilitySV: "Gjuten på plats", ApplicabilityEN: "Cast in place",
		Synonyms: "cement;gjutning", SynonymsEN: "cement;casting",
		A1A3: core.F(0.123456789), A1A3Conservative: core.F(0.16), A4: core.F(1e-3), A51: core.F(-2.5),
		GWPUnit:            "kg CO2e/kg",
		ConservativeFactor: core.F(1.3), WasteFactor: core.F(0.05), BiogenicCarbon: core.F(0),
		ServiceLife: "50",
		Transports: []core.Transport{
			{Name: "Lastbil", DistanceKm: 50, Type: "truck", Fuel: "diesel", FuelResourceID: "fuel-1"},
			{Name: "Fartyg", DistanceKm: 1200.5, Type: "ship"},
		},
		Unit:         "kg",
		Conversions:  map[string]float64{"m3": 2400, "m2": 480.25},
		Category:     "Betong",
		CategoryEN:   "Concrete",
		CategoryCode: "0d3b",
		BK04:         "1234 Betong",
		Version:      "2024-06",
		Source:       core.SourceNational,
		Origin:       "https://example.org/sheet/" + id,
		Withdrawn:    true,
	}
	return ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
}
