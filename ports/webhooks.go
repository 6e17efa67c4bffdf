package ports

import (
	"context"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// WebhookStore keeps destinations, the event outbox, the delivery queue and
// the delivery log durably. Events reach deliveries in two steps, each one
// transaction: RecordEvent (or Changes.Events) puts an event in the outbox;
// FanOut turns it into one queued Delivery per destination.
//
// The queue is shared by every replica of the service (every
// webhooks.Service over the store): a replica attempts a delivery only
// after claiming it (Claim), which leases it to that replica until the
// attempt is recorded (FinishClaim), given back (Release) or the lease runs
// out; then any replica may claim it again.
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
	// When the event has left the outbox already (another replica fanned it
	// out at the same moment), it writes nothing: an event is fanned out
	// once, whoever races.
	FanOut(ctx context.Context, eventID string, ds []core.Delivery) error

	// Queue returns every queued delivery, claimed or not.
	Queue(ctx context.Context) ([]core.Delivery, error)
	// Pending counts the queued deliveries of a destination, of every
	// destination when destinationID is "".
	Pending(ctx context.Context, destinationID string) (int, error)
	// Finish appends an attempt to the destination's log (keeping the
	// latest core.MaxDeliveryLog) and, atomically with it, either stores d
	// as still queued (requeue, without a lease) or removes it from the
	// queue. It ignores leases: the test delivery, never queued, uses it.
	Finish(ctx context.Context, d core.Delivery, a core.DeliveryAttempt, requeue bool) error

	// Claim leases to owner, until now+lease, at most limit queued
	// deliveries that are due (NextAttempt <= now) and not under a lease
	// (none, or one that ended: Until <= now), oldest NextAttempt first,
	// without letting any destination have more than perDestination live
	// leases (of every owner) at once. It is atomic across replicas: a
	// delivery is leased to one claimer at a time.
	Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, perDestination, limit int) (Claims, error)
	// FinishClaim is Finish for a claimed delivery, and ends its lease:
	// when requeued, the delivery stays queued with Attempts = a.Attempt
	// and NextAttempt = a.NextAttempt. If c's lease is no longer held (it
	// ran out and another replica claimed the delivery, or the delivery
	// is gone with its destination), it writes nothing and held is false.
	FinishClaim(ctx context.Context, c Claimed, a core.DeliveryAttempt, requeue bool) (held bool, err error)
	// Release ends c's lease without an attempt (the claimer stops): the
	// delivery is due again at once. Nothing happens when the lease is no
	// longer held.
	Release(ctx context.Context, c Claimed) error
	// Attempts returns a destination's latest attempts, newest first.
	Attempts(ctx context.Context, destinationID string, limit int) ([]core.DeliveryAttempt, error)
	// History returns the latest fanned-out events (at most
	// core.MaxEventHistory are kept), newest first.
	History(ctx context.Context, limit int) ([]core.Event, error)
}

// Lease is one claim of a queued delivery: who holds it and until when.
// Stores return Until as they keep it; with Owner it names the claim.
type Lease struct {
	Owner string
	Until time.Time
}

// Claimed is a queued delivery under a lease, as Claim returns it.
type Claimed struct {
	core.Delivery
	Lease Lease
}

// Claims is what one Claim took, and when to look again.
type Claims struct {
	Deliveries []Claimed
	// Next is the earliest time after now at which a delivery not claimed
	// now may become claimable: a future NextAttempt or the end of a live
	// lease (which frees a destination's slot); now itself when limit cut
	// the claim short; zero when nothing else is queued. A lease given
	// back early (FinishClaim, Release) frees its slot before Next:
	// replicas also look again at their poll interval.
	Next time.Time
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
