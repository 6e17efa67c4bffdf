package core

import (
	"encoding/json"
	"time"
)

// Access control of the hosted build: customer API keys verified by a key
// service, and per-call payment with the HTTP Payment authentication scheme
// (draft-httpauth-payment-01, charge intent). The self-hosted build uses
// none of this.

// KeyCode is a key service's verdict on a key (Unkey's codes).
type KeyCode string

const (
	KeyValid                   KeyCode = "VALID"
	KeyNotFound                KeyCode = "NOT_FOUND"
	KeyForbidden               KeyCode = "FORBIDDEN"
	KeyInsufficientPermissions KeyCode = "INSUFFICIENT_PERMISSIONS"
	KeyUsageExceeded           KeyCode = "USAGE_EXCEEDED"
	KeyRateLimited             KeyCode = "RATE_LIMITED"
	KeyDisabled                KeyCode = "DISABLED"
	KeyExpired                 KeyCode = "EXPIRED"
)

// KeyVerdict is what a key service says of one key.
type KeyVerdict struct {
	Valid bool
	Code  KeyCode
	// Name identifies the key's owner for logs (never the key itself).
	Name string
	// RetryAfter is set for RATE_LIMITED and USAGE_EXCEEDED when the
	// service says when to come back.
	RetryAfter time.Duration
}

// PaymentRequest is what one call costs: the `request` parameter of a
// charge challenge, bound to the call's path and query.
type PaymentRequest struct {
	Amount    string `json:"amount"` // in the currency's base units, a decimal integer
	Currency  string `json:"currency"`
	Recipient string `json:"recipient"`
	// Path is the call the payment is for: its HTTP method, path and query
	// ("GET /api/search?q=…"). On the wire it is the charge request's
	// `externalId`, a field of the charge intent every client carries
	// through unchanged.
	Path string `json:"externalId,omitempty"`
	// Description says what is bought.
	Description string `json:"description,omitempty"`
}

// PaymentProof is a credential's payment, handed to a payment method.
type PaymentProof struct {
	Method  string
	Request PaymentRequest
	// Source identifies the payer (e.g. a DID or an address), as the credential says.
	Source  string
	Payload json.RawMessage
	// ChallengeID and Realm are the challenge the credential answers, for
	// methods that bind the payment to it (tempo's attribution memo).
	ChallengeID string
	Realm       string
	// Expires is when the challenge stops being payable.
	Expires time.Time
}

// PaymentReceipt is a verified payment.
type PaymentReceipt struct {
	Method string `json:"method"`
	// Reference identifies the payment on its rail (a transaction hash);
	// each reference pays for one call only.
	Reference string    `json:"reference"`
	Status    string    `json:"status"`
	Timestamp time.Time `json:"timestamp"`
}

// Call is one guarded request, as the payment scheme binds it.
type Call struct {
	// Host is the request's host (the default realm).
	Host string
	// Method and PathQuery are the HTTP method and the path with its query.
	Method    string
	PathQuery string
	// BodyDigest is the RFC 9530 digest of the body ("sha-256=:…:"), empty
	// for a call without a body.
	BodyDigest string
	// What names what is bought, for the challenge's description (e.g.
	// "search", "tools/call search_climate_data").
	What string
}

// PaymentChallenge is the answer to a call that must be paid: the
// WWW-Authenticate value and the application/problem+json body of a 402.
type PaymentChallenge struct {
	ID     string
	Header string
	// Problem is the problem+json body (type, title, status, detail, challengeId).
	Problem []byte
	// ProblemType is the problem's type URI.
	ProblemType string
	// Object is the challenge as a JSON object with its request decoded,
	// the form MCP carries in a -32042 error's data.challenges.
	Object json.RawMessage
}

// PaymentRefused explains why a credential was not accepted; it carries a
// fresh challenge, since every refusal answers 402 with one.
type PaymentRefused struct {
	Challenge PaymentChallenge
	Detail    string
}

func (e *PaymentRefused) Error() string { return "payment refused: " + e.Detail }
