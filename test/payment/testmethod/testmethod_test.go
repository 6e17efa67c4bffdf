package testmethod

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

func TestVerify(t *testing.T) {
	req := core.PaymentRequest{Amount: "10000", Currency: "usd", Recipient: "acct", Path: "GET /api/search?q=x"}
	ok := Payload{Reference: "test-1", Amount: "10000", Currency: "usd", Recipient: "acct", ExternalID: "GET /api/search?q=x"}
	for _, c := range []struct {
		name string
		edit func(p *Payload)
		kind core.ErrorKind // KindInternal: accepted
	}{
		{"pays", func(*Payload) {}, core.KindInternal},
		{"no reference", func(p *Payload) { p.Reference = "" }, core.KindInvalid},
		{"too little", func(p *Payload) { p.Amount = "1" }, core.KindInvalid},
		{"another recipient", func(p *Payload) { p.Recipient = "other" }, core.KindInvalid},
		{"another call", func(p *Payload) { p.ExternalID = "GET /api/search?q=y" }, core.KindInvalid},
		{"refuse asked", func(p *Payload) { p.Outcome = "refuse" }, core.KindInvalid},
		{"outage asked", func(p *Payload) { p.Outcome = "outage" }, core.KindUnavailable},
	} {
		p := ok
		c.edit(&p)
		raw, _ := json.Marshal(p)
		m := New()
		r, err := m.Verify(context.Background(), core.PaymentProof{Method: Name, Request: req, Payload: raw})
		switch {
		case c.kind == core.KindInternal && (err != nil || r.Reference != "test-1" || r.Method != Name):
			t.Errorf("%s: %+v %v", c.name, r, err)
		case c.kind != core.KindInternal && core.KindOf(err) != c.kind:
			t.Errorf("%s: %v, want kind %v", c.name, err, c.kind)
		}
		if len(m.Proofs()) != 1 {
			t.Errorf("%s: proofs not recorded", c.name)
		}
	}
}
