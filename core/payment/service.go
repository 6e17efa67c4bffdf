// Package payment is the HTTP Payment authentication scheme
// (draft-httpauth-payment-01) with the charge intent
// (draft-payment-intent-charge-00), written from the drafts and checked
// byte for byte against the reference client mppx 0.11.0: challenges bound
// to the call they price by an HMAC id, and credentials checked, paid
// through a payment method and spent once in a ledger.
//
// A challenge prices one call: its `request` (RFC 8785 JSON, base64url)
// holds the amount, currency and recipient, and, in the charge request's
// `externalId`, the call's HTTP method, path and query; the id is an
// HMAC-SHA256 over every parameter, so nothing in it can be changed. A
// random nonce in `opaque` makes every challenge unique, so two agents
// asking for the same page in the same second never share a challenge.
package payment

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.Payments = (*Service)(nil)

// Intent is the only intent this service issues and accepts.
const Intent = "charge"

// Problem types (draft-httpauth-payment-01, §Problem Types).
const (
	ProblemPaymentRequired     = "https://paymentauth.org/problems/payment-required"
	ProblemMalformedCredential = "https://paymentauth.org/problems/malformed-credential"
	ProblemInvalidChallenge    = "https://paymentauth.org/problems/invalid-challenge"
	ProblemPaymentExpired      = "https://paymentauth.org/problems/payment-expired"
	ProblemVerificationFailed  = "https://paymentauth.org/problems/verification-failed"
)

var problemTitles = map[string]string{
	ProblemPaymentRequired:     "Payment Required",
	ProblemMalformedCredential: "Malformed Credential",
	ProblemInvalidChallenge:    "Invalid Challenge",
	ProblemPaymentExpired:      "Payment Expired",
	ProblemVerificationFailed:  "Verification Failed",
}

// Config is what every call costs and how challenges are bound.
type Config struct {
	// Secret keys the challenge ids (SERVICE_PAYMENT_SECRET); at least 16
	// bytes.
	Secret []byte
	// Realm of the challenges; empty: the call's host without its port.
	Realm string
	// Method names the payment method challenges offer; it must be one of
	// the methods given to New. Default "tempo".
	Method string
	// Amount is the price of one call in the currency's base units, a
	// positive decimal integer (e.g. "10000" = 0.01 of a 6-decimal token).
	Amount string
	// Currency is the token (for tempo, the TIP-20 token address).
	Currency string
	// Recipient receives the payment (for tempo, an address).
	Recipient string
	// ChainID, when set, is advertised as the request's
	// methodDetails.chainId (which chain the client must pay on).
	ChainID int64
	// TTL is how long a challenge can be paid; default 5 minutes.
	TTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Service implements ports.Payments.
type Service struct {
	cfg     Config
	methods map[string]ports.PaymentMethod
	ledger  ports.PaymentLedger
	now     func() time.Time
	nonce   func() string
}

var (
	methodName = regexp.MustCompile(`^[a-z][a-z0-9:_-]*$`) // mppx refuses other names
	amountRe   = regexp.MustCompile(`^[0-9]+$`)
)

// New checks cfg and returns the service. methods are the payment methods
// credentials may use, by Name; cfg.Method must be among them.
func New(cfg Config, methods []ports.PaymentMethod, ledger ports.PaymentLedger) (*Service, error) {
	if len(cfg.Secret) < 16 {
		return nil, errors.New("payment: the secret must have at least 16 bytes")
	}
	if cfg.Method == "" {
		cfg.Method = "tempo"
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 5 * time.Minute
	}
	if !amountRe.MatchString(cfg.Amount) || strings.Trim(cfg.Amount, "0") == "" {
		return nil, fmt.Errorf("payment: amount %q is not a positive integer in base units", cfg.Amount)
	}
	if strings.TrimSpace(cfg.Currency) == "" || strings.TrimSpace(cfg.Recipient) == "" {
		return nil, errors.New("payment: currency and recipient are required")
	}
	if ledger == nil {
		return nil, errors.New("payment: a ledger is required")
	}
	s := &Service{cfg: cfg, methods: map[string]ports.PaymentMethod{}, ledger: ledger, now: cfg.Now, nonce: randomNonce}
	if s.now == nil {
		s.now = time.Now
	}
	for _, m := range methods {
		if m == nil {
			continue
		}
		if !methodName.MatchString(m.Name()) {
			return nil, fmt.Errorf("payment: method name %q is not lowercase [a-z][a-z0-9:_-]*", m.Name())
		}
		if _, dup := s.methods[m.Name()]; dup {
			return nil, fmt.Errorf("payment: two methods named %q", m.Name())
		}
		s.methods[m.Name()] = m
	}
	if _, ok := s.methods[cfg.Method]; !ok {
		return nil, fmt.Errorf("payment: method %q is not registered", cfg.Method)
	}
	return s, nil
}

func randomNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Challenge returns a fresh payment-required challenge for call.
func (s *Service) Challenge(_ context.Context, call core.Call) core.PaymentChallenge {
	detail := "Payment is required."
	if call.What != "" {
		detail = "Payment is required (" + call.What + ")."
	}
	return s.issue(call, ProblemPaymentRequired, detail)
}

// Pay checks an authorization for call, has the method verify the payment
// and spends it in the ledger. authorization is `Payment <base64url JSON>`
// or the credential as a JSON object (MCP's
// params._meta["org.paymentauth/credential"]). A refused credential is a
// *core.PaymentRefused with a fresh challenge; any other error is an
// outage of the payment rail or the ledger.
func (s *Service) Pay(ctx context.Context, call core.Call, authorization string) (core.PaymentReceipt, string, error) {
	cred, err := parseCredential(authorization)
	if err != nil {
		return core.PaymentReceipt{}, "", s.refuse(call, ProblemMalformedCredential, "Credential is malformed: "+strings.TrimPrefix(err.Error(), errMalformed.Error()+": ")+".")
	}
	ch := cred.Challenge
	// The id proves this server issued exactly these parameters.
	if !hmac.Equal([]byte(ch.ID), []byte(computeID(s.cfg.Secret, ch))) {
		return s.refused(call, ProblemInvalidChallenge, "challenge was not issued by this server")
	}
	if ch.Realm != s.realm(call) {
		return s.refused(call, ProblemInvalidChallenge, "challenge is for another realm")
	}
	if ch.Intent != Intent {
		return s.refused(call, ProblemInvalidChallenge, fmt.Sprintf("intent %q is not accepted", ch.Intent))
	}
	method, ok := s.methods[ch.Method]
	if !ok {
		return s.refused(call, ProblemInvalidChallenge, fmt.Sprintf("payment method %q is not accepted", ch.Method))
	}
	// What was paid for must be what this call costs: the amount,
	// currency, recipient and the call's method, path and query.
	want, wantObj := s.request(call)
	if ch.Request != want {
		return s.refused(call, ProblemInvalidChallenge, "challenge was issued for another call or price")
	}
	if ch.Digest != call.BodyDigest {
		return s.refused(call, ProblemInvalidChallenge, "challenge was issued for another request body")
	}
	if ch.Expires == "" {
		return s.refused(call, ProblemInvalidChallenge, "challenge has no expiry")
	}
	expires, err := time.Parse(time.RFC3339Nano, ch.Expires)
	if err != nil {
		return s.refused(call, ProblemInvalidChallenge, "challenge expiry is malformed")
	}
	if s.now().After(expires) {
		return core.PaymentReceipt{}, "", s.refuse(call, ProblemPaymentExpired, "Payment expired at "+ch.Expires+".")
	}

	proof := core.PaymentProof{
		Method:      ch.Method,
		Request:     requestOf(wantObj),
		Source:      cred.Source,
		Payload:     cred.Payload,
		ChallengeID: ch.ID,
		Realm:       ch.Realm,
		Expires:     expires,
	}
	receipt, err := method.Verify(ctx, proof)
	if err != nil {
		var refused *core.PaymentRefused
		switch {
		case errors.As(err, &refused):
			return core.PaymentReceipt{}, "", s.refuse(call, ProblemVerificationFailed, refused.Detail)
		case core.KindOf(err) == core.KindInvalid:
			return core.PaymentReceipt{}, "", s.refuse(call, ProblemVerificationFailed, "Payment verification failed: "+err.Error()+".")
		}
		return core.PaymentReceipt{}, "", fmt.Errorf("payment: %s: %w", ch.Method, err)
	}
	if receipt.Reference == "" {
		return core.PaymentReceipt{}, "", fmt.Errorf("payment: %s: receipt without a reference", ch.Method)
	}
	if receipt.Status != "" && receipt.Status != "success" {
		return core.PaymentReceipt{}, "", s.refuse(call, ProblemVerificationFailed, "Payment verification failed: status "+receipt.Status+".")
	}
	receipt.Status = "success"
	if receipt.Method == "" {
		receipt.Method = ch.Method
	}
	if receipt.Timestamp.IsZero() {
		receipt.Timestamp = s.now()
	}
	receipt.Timestamp = receipt.Timestamp.UTC()

	fresh, err := s.ledger.Spend(ctx, ch.ID, receipt.Reference, expires)
	if err != nil {
		return core.PaymentReceipt{}, "", fmt.Errorf("payment: ledger: %w", err)
	}
	if !fresh {
		return s.refused(call, ProblemInvalidChallenge, "challenge or payment was already used")
	}
	return receipt, receiptHeader(receipt), nil
}

// refused is refuse for the invalid-challenge family, with mppx's wording.
func (s *Service) refused(call core.Call, typ, reason string) (core.PaymentReceipt, string, error) {
	return core.PaymentReceipt{}, "", s.refuse(call, typ, "Challenge is invalid: "+reason+".")
}

func (s *Service) refuse(call core.Call, typ, detail string) error {
	return &core.PaymentRefused{Challenge: s.issue(call, typ, detail), Detail: detail}
}

// issue builds a fresh challenge for call with a problem of type typ.
func (s *Service) issue(call core.Call, typ, detail string) core.PaymentChallenge {
	req, reqObj := s.request(call)
	opaque, _ := canonical(map[string]any{"nonce": s.nonce()})
	c := challenge{
		Realm:       s.realm(call),
		Method:      s.cfg.Method,
		Intent:      Intent,
		Request:     req,
		Description: call.What,
		Digest:      call.BodyDigest,
		Expires:     s.now().Add(s.cfg.TTL).UTC().Truncate(time.Second).Format(time.RFC3339),
		Opaque:      base64.RawURLEncoding.EncodeToString(opaque),
	}
	c.ID = computeID(s.cfg.Secret, c)
	problem, _ := json.Marshal(struct {
		Type        string `json:"type"`
		Title       string `json:"title"`
		Status      int    `json:"status"`
		Detail      string `json:"detail"`
		ChallengeID string `json:"challengeId"`
	}{typ, problemTitles[typ], 402, detail, c.ID})
	return core.PaymentChallenge{
		ID:          c.ID,
		Header:      headerValue(c),
		Problem:     problem,
		ProblemType: typ,
		Object:      object(c, reqObj),
	}
}

// realm is the configured realm or the call's host without its port.
func (s *Service) realm(call core.Call) string {
	if s.cfg.Realm != "" {
		return s.cfg.Realm
	}
	host := call.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "" {
		return "climatesearch"
	}
	return strings.ToLower(host)
}

// request is the charge request a call costs, as base64url
// canonical JSON and as the object it encodes: amount, currency,
// recipient, the call in externalId ("GET /api/search?q=…"), its
// description, and methodDetails.chainId when configured. These are the
// charge intent's own fields, so mppx keeps every one of them when it
// parses and echoes the request (node_modules/mppx/dist/tempo/Methods.js).
func (s *Service) request(call core.Call) (string, map[string]any) {
	m := map[string]any{
		"amount":     s.cfg.Amount,
		"currency":   s.cfg.Currency,
		"recipient":  s.cfg.Recipient,
		"externalId": strings.ToUpper(call.Method) + " " + call.PathQuery,
	}
	if call.What != "" {
		m["description"] = call.What
	}
	if s.cfg.ChainID != 0 {
		m["methodDetails"] = map[string]any{"chainId": s.cfg.ChainID}
	}
	out, err := canonical(m)
	if err != nil {
		panic(err) // strings and an int64 only
	}
	return base64.RawURLEncoding.EncodeToString(out), m
}

func requestOf(m map[string]any) core.PaymentRequest {
	str := func(k string) string { s, _ := m[k].(string); return s }
	return core.PaymentRequest{
		Amount:      str("amount"),
		Currency:    str("currency"),
		Recipient:   str("recipient"),
		Path:        str("externalId"),
		Description: str("description"),
	}
}

// receiptHeader is the Payment-Receipt value: base64url (no padding) of
// the receipt JSON (mppx Receipt.serialize); the timestamp as JavaScript's
// toISOString writes it.
func receiptHeader(r core.PaymentReceipt) string {
	b, _ := json.Marshal(struct {
		Method    string `json:"method"`
		Reference string `json:"reference"`
		Status    string `json:"status"`
		Timestamp string `json:"timestamp"`
	}{r.Method, r.Reference, r.Status, r.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z")})
	return base64.RawURLEncoding.EncodeToString(b)
}
