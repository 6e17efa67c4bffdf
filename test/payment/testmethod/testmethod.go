// Package testmethod is a payment method for tests only (the issue's "a
// payment method the test defines and the server accepts only in tests"):
// it moves no money, so production code never registers it. Its client
// side is test/payment/testmethod.mjs, an mppx client method, so the end
// to end tests can pay with mppx's Mppx.create(...).fetch.
//
// A credential's payload echoes what the challenge asks for and names a
// payment reference:
//
//	{"reference": "test-…", "amount": "…", "currency": "…", "recipient": "…", "externalId": "…"}
//
// Verify accepts it when the echoed values equal the request the server
// priced (so the client provably read the challenge's request) and the
// reference is not empty; the reference is the receipt's reference, so the
// ledger refuses it the second time. Two outcomes can be asked for, to test
// the guard's answers: "outcome": "refuse" fails verification (a 402 with
// verification-failed), "outcome": "outage" is an unreachable rail (503).
package testmethod

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Name is the method's name in challenges and credentials.
const Name = "test"

// Method is the test payment method. It is safe for concurrent use.
type Method struct {
	mu     sync.Mutex
	proofs []core.PaymentProof
}

var _ ports.PaymentMethod = (*Method)(nil)

// New returns the method.
func New() *Method { return &Method{} }

// Name is "test".
func (m *Method) Name() string { return Name }

// Payload is what the client method puts in a credential.
type Payload struct {
	Reference  string `json:"reference"`
	Amount     string `json:"amount"`
	Currency   string `json:"currency"`
	Recipient  string `json:"recipient"`
	ExternalID string `json:"externalId"`
	Outcome    string `json:"outcome,omitempty"`
}

// Verify checks the payload against the request; see the package comment.
func (m *Method) Verify(_ context.Context, p core.PaymentProof) (core.PaymentReceipt, error) {
	m.mu.Lock()
	m.proofs = append(m.proofs, p)
	m.mu.Unlock()
	var pl Payload
	if err := json.Unmarshal(p.Payload, &pl); err != nil {
		return core.PaymentReceipt{}, core.Invalidf("test method: the payload is not an object")
	}
	switch pl.Outcome {
	case "refuse":
		return core.PaymentReceipt{}, core.Invalidf("test method: refused as asked")
	case "outage":
		return core.PaymentReceipt{}, core.Unavailablef(errors.New("test outage"), "test method: the rail is down, as asked")
	}
	r := p.Request
	switch {
	case pl.Reference == "":
		return core.PaymentReceipt{}, core.Invalidf("test method: no reference")
	case pl.Amount != r.Amount || pl.Currency != r.Currency || pl.Recipient != r.Recipient:
		return core.PaymentReceipt{}, core.Invalidf("test method: paid %s %s to %s, the request is %s %s to %s",
			pl.Amount, pl.Currency, pl.Recipient, r.Amount, r.Currency, r.Recipient)
	case pl.ExternalID != r.Path:
		return core.PaymentReceipt{}, core.Invalidf("test method: paid for %q, the request is for %q", pl.ExternalID, r.Path)
	}
	return core.PaymentReceipt{Method: Name, Reference: pl.Reference, Status: "success"}, nil
}

// Proofs returns the proofs Verify was given, in order.
func (m *Method) Proofs() []core.PaymentProof {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]core.PaymentProof(nil), m.proofs...)
}
