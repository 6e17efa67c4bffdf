package ports

import (
	"context"

	"github.com/climatesearch/climatesearch/core"
)

// WebhookStore keeps destinations, the event outbox, the delivery queue and
// the delivery log durably. Events reach deliveries in two steps, each one
// transaction: RecordEvent (or Changes.Events) puts an event in the outbox;
// FanOut turns it into one queued Delivery per destination.
type WebhookStore interface {
	// Destinations returns the stored destinations in creation order.
	Destinations(ctx context.Context) ([]core.Destination, error)
	// Destination returns one stored destination; found is false when absent.
	Destination(ctx context.Context, id string) (d core.Destination, found bool, err error)
	// PutDestination creates or replaces a destination.
	PutDestination(ctx context.Context, d core.Destination) error
	// DeleteDestination removes a destination with its queued deliveries and
	// its log; an unknown id is not an error.
	DeleteDestination(ctx context.Context, id string) error

	// RecordEvent puts an event in the outbox, unless an event with its id
	// was recorded before (in the outbox or already fanned out).
	RecordEvent(ctx context.Context, ev core.Event) error
	// Outbox returns the recorded events not yet fanned out, oldest first.
	Outbox(ctx context.Context) ([]core.Event, error)
	// FanOut queues the deliveries of an outbox event and removes the event
	// from the outbox, atomically. ds may be empty (nobody wants the event).
	FanOut(ctx context.Context, eventID string, ds []core.Delivery) error

	// Queue returns every queued delivery.
	Queue(ctx context.Context) ([]core.Delivery, error)
	// Finish appends an attempt to the destination's log (keeping the
	// latest core.MaxDeliveryLog) and, atomically with it, either stores d
	// as still queued (requeue) or removes it from the queue.
	Finish(ctx context.Context, d core.Delivery, a core.DeliveryAttempt, requeue bool) error
	// Attempts returns a destination's latest attempts, newest first.
	Attempts(ctx context.Context, destinationID string, limit int) ([]core.DeliveryAttempt, error)
	// History returns the latest fanned-out events (at most
	// core.MaxEventHistory are kept), newest first.
	History(ctx context.Context, limit int) ([]core.Event, error)
}

// WebhookSender makes HTTP deliveries.
type WebhookSender interface {
	// Check refuses a URL the sender would not call: a scheme other than
	// http or https, or an address that is loopback, private, link-local or
	// a cloud metadata endpoint (unless private addresses are allowed).
	Check(ctx context.Context, rawURL string) error
	// Send makes one attempt: the body for d.Kind, signed for generic
	// destinations, with a bounded timeout. It never follows redirects.
	Send(ctx context.Context, d core.Destination, ev core.Event) core.SendResult
}

// Webhooks manages destinations (the admin REST API and the console).
// Destinations it returns have their secret masked, except the answers of
// Create and of an Update that set or rotated the secret.
type Webhooks interface {
	List(ctx context.Context) ([]core.Destination, error)
	Create(ctx context.Context, in core.DestinationInput) (core.Destination, error)
	Get(ctx context.Context, id string) (core.Destination, error)
	Update(ctx context.Context, id string, in core.DestinationInput) (core.Destination, error)
	Delete(ctx context.Context, id string) error
	// Test sends a webhook.test event to one destination now (one attempt,
	// logged, not retried) and returns the attempt.
	Test(ctx context.Context, id string) (core.DeliveryAttempt, error)
	// Deliveries returns the destination's latest attempts and pending count.
	Deliveries(ctx context.Context, id string, limit int) (core.DeliveryLog, error)
	// Events returns the latest events, newest first, each with the state
	// of its delivery at every destination.
	Events(ctx context.Context, limit int) ([]core.EventRecord, error)
}
