package ports

import (
	"context"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// KeyVerifier asks a key-management service about a customer API key. An
// error means the service could not answer (an outage, not a bad key).
type KeyVerifier interface {
	Verify(ctx context.Context, key string) (core.KeyVerdict, error)
}

// PaymentMethod verifies that a credential's payload pays a request on its
// payment rail (e.g. the tempo chain through its JSON-RPC endpoint).
type PaymentMethod interface {
	// Name is the method of challenges and credentials, e.g. "tempo".
	Name() string
	// Verify returns the receipt of a payment that pays proof.Request in
	// full, or an error saying why it does not (a *core.Error of kind
	// KindInvalid for a payment that fails verification, KindUnavailable
	// when the rail cannot be asked).
	Verify(ctx context.Context, proof core.PaymentProof) (core.PaymentReceipt, error)
}

// PaymentLedger remembers spent challenges and payment references, durably,
// so a credential is accepted once, also across restarts.
type PaymentLedger interface {
	// Spend records the challenge id and the payment reference as used
	// until expiry; fresh is false when either was used before (nothing is
	// recorded then).
	Spend(ctx context.Context, challengeID, reference string, until time.Time) (fresh bool, err error)
}

// --- Driver ports of the hosted build's guard ---

// Keys checks customer API keys (cached verdicts of a KeyVerifier).
type Keys interface {
	// Check returns the verdict on a key; an error is an outage of the key
	// service (answered 503), never a bad key.
	Check(ctx context.Context, key string) (core.KeyVerdict, error)
}

// Payments is the HTTP Payment scheme (draft-httpauth-payment-01, charge
// intent) for the guard: fresh challenges, and credentials checked and paid.
type Payments interface {
	// Challenge returns a fresh challenge for a call.
	Challenge(ctx context.Context, call core.Call) core.PaymentChallenge
	// Pay checks an `Authorization: Payment …` value for the call and has
	// the payment method verify it. A refused credential is a
	// *core.PaymentRefused carrying a fresh challenge; any other error is
	// an outage of the payment rail or the ledger.
	Pay(ctx context.Context, call core.Call, authorization string) (receipt core.PaymentReceipt, receiptHeader string, err error)
}
