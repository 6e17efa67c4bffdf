package tempo

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/tempo/tempotest"
	"github.com/climatesearch/climatesearch/core"
)

const (
	token     = "0x20C000000000000000000000b9537d11c60E8b50" // USDC on Tempo
	recipient = "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00"
	payer     = "0x1111111111111111111111111111111111111111"
	stranger  = "0x2222222222222222222222222222222222222222"
	realm     = "api.example.com"
	challenge = "oJNQmkk7fGPGO7flDAzVmbOnlpluEyqtNj3q7hhq6Ng"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func newMethod(t *testing.T) (*Method, *tempotest.Server) {
	t.Helper()
	node := tempotest.NewServer(t)
	m, err := New(Config{RPCURL: node.URL, ChainID: tempotest.ChainID, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return m, node
}

func proof(payload string) core.PaymentProof {
	return core.PaymentProof{
		Method:      Name,
		Request:     core.PaymentRequest{Amount: "10000", Currency: token, Recipient: recipient, Path: "GET /api/search?q=x"},
		Source:      "did:pkh:eip155:4217:" + payer,
		Payload:     json.RawMessage(payload),
		ChallengeID: challenge,
		Realm:       realm,
	}
}

func hashPayload(h string) string { return `{"type":"hash","hash":"` + h + `"}` }

// A paying transaction as mppx's tempo client makes it: transferWithMemo
// of the amount to the recipient with the challenge's attribution memo
// (a TIP-20 token logs Transfer and TransferWithMemo for it).
func paying(hash string) tempotest.Receipt {
	memo := tempotest.Memo(realm, challenge)
	return tempotest.Receipt{Hash: hash, From: payer, To: token, Logs: []tempotest.Log{
		tempotest.TransferLog(token, payer, recipient, 10000),
		tempotest.TransferWithMemoLog(token, payer, recipient, 10000, memo),
	}}
}

func TestMemoMatchesMppx(t *testing.T) {
	// Printed by mppx 0.11.0: Attribution.encode({challengeId: 'abc',
	// serverId: 'api.example.com'}); the topics by viem's toEventSelector.
	m := tempotest.Memo("api.example.com", "abc")
	if got := "0x" + strings.ToLower(hexOf(m[:])); got != "0xef1ed712011ece072f76bd8b82350e000000000000000000004e03657aea45a9" {
		t.Errorf("memo %s", got)
	}
	if !boundMemo(m[:], "api.example.com", "abc") || boundMemo(m[:], "api.example.com", "abd") || boundMemo(m[:], "other", "abc") {
		t.Error("boundMemo")
	}
	if transferTopic != "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef" ||
		transferWithMemoTopic != "0x57bc7354aa85aed339e000bccffabbc529466af35f0772c8f8ee1145927de7f0" ||
		tempotest.TransferTopic != transferTopic || tempotest.TransferWithMemoTopic != transferWithMemoTopic {
		t.Error("event topics")
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

func TestVerifyHashPayment(t *testing.T) {
	m, node := newMethod(t)
	h := tempotest.Hash("tx1")
	node.AddReceipt(paying("0x" + strings.ToUpper(h[2:]))) // nodes may answer in either case
	r, err := m.Verify(context.Background(), proof(hashPayload(h)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "tempo" || r.Reference != h || r.Status != "success" || !r.Timestamp.Equal(t0) {
		t.Errorf("receipt %+v", r)
	}
	if calls := node.Calls(); len(calls) != 1 || calls[0] != "eth_getTransactionReceipt" {
		t.Errorf("calls %v", calls)
	}
}

// Pull mode, mppx's default for a local account: the server broadcasts
// the signed transaction and checks the mined receipt.
func TestVerifySignedTransaction(t *testing.T) {
	m, node := newMethod(t)
	const raw = "0x76f8aa0182a4b1"
	h := tempotest.Hash("tx-raw")
	node.AddRawTransaction(raw, paying(h))
	r, err := m.Verify(context.Background(), proof(`{"type":"transaction","signature":"`+raw+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Reference != h {
		t.Errorf("reference %s", r.Reference)
	}
	if calls := node.Calls(); len(calls) != 1 || calls[0] != "eth_sendRawTransactionSync" {
		t.Errorf("calls %v", calls)
	}
	// Broadcasting it again: the node refuses, a verdict on the payment.
	_, err = m.Verify(context.Background(), proof(`{"type":"transaction","signature":"`+raw+`"}`))
	if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "already known") {
		t.Errorf("rebroadcast: %v", err)
	}
}

// Overpaying pays; without a source the transaction's sender is the payer;
// a request without a challenge accepts a plain Transfer.
func TestVerifyAccepts(t *testing.T) {
	m, node := newMethod(t)
	over := paying(tempotest.Hash("over"))
	over.Logs = []tempotest.Log{tempotest.TransferWithMemoLog(token, payer, recipient, 20000, tempotest.Memo(realm, challenge))}
	node.AddReceipt(over)
	if _, err := m.Verify(context.Background(), proof(hashPayload(over.Hash))); err != nil {
		t.Errorf("overpayment: %v", err)
	}
	p := proof(hashPayload(over.Hash))
	p.Source = ""
	if _, err := m.Verify(context.Background(), p); err != nil {
		t.Errorf("no source: %v", err)
	}
	plain := paying(tempotest.Hash("plain"))
	plain.Logs = plain.Logs[:1]
	node.AddReceipt(plain)
	p = proof(hashPayload(plain.Hash))
	p.ChallengeID, p.Realm = "", ""
	if _, err := m.Verify(context.Background(), p); err != nil {
		t.Errorf("plain transfer without a challenge: %v", err)
	}
}

// Payments that do not pay are KindInvalid, with the reason.
func TestVerifyRefuses(t *testing.T) {
	memo := tempotest.Memo(realm, challenge)
	cases := []struct {
		name    string
		receipt func(h string) tempotest.Receipt
		proof   func(p *core.PaymentProof)
		payload string // default: the hash payload
		want    string
	}{
		{name: "wrong recipient", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Logs = []tempotest.Log{tempotest.TransferWithMemoLog(token, payer, stranger, 10000, memo)}
			return r
		}, want: "no transfer of the currency to the recipient"},
		{name: "too little", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Logs = []tempotest.Log{tempotest.TransferWithMemoLog(token, payer, recipient, 9999, memo)}
			return r
		}, want: "9999, less than 10000"},
		{name: "another token", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Logs = []tempotest.Log{tempotest.TransferWithMemoLog("0x20c0000000000000000000000000000000000000", payer, recipient, 10000, memo)}
			return r
		}, want: "no transfer of the currency"},
		{name: "from someone else", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Logs = []tempotest.Log{tempotest.TransferWithMemoLog(token, stranger, recipient, 10000, memo)}
			return r
		}, want: "not from the payer"},
		{name: "no memo (a transfer made for something else)", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Logs = r.Logs[:1]
			return r
		}, want: "no memo bound to the challenge"},
		{name: "memo of another challenge", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Logs = []tempotest.Log{tempotest.TransferWithMemoLog(token, payer, recipient, 10000, tempotest.Memo(realm, "another"))}
			return r
		}, want: "bound to another challenge"},
		{name: "memo of another server", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Logs = []tempotest.Log{tempotest.TransferWithMemoLog(token, payer, recipient, 10000, tempotest.Memo("evil.example", challenge))}
			return r
		}, want: "bound to another challenge or server"},
		{name: "failed transaction", receipt: func(h string) tempotest.Receipt {
			r := paying(h)
			r.Failed = true
			return r
		}, want: "failed (status 0x0)"},
		{name: "unknown transaction", want: "unknown to the chain"},
		{name: "source on another chain", receipt: paying, proof: func(p *core.PaymentProof) { p.Source = "did:pkh:eip155:42431:" + payer }, want: "chain 42431"},
		{name: "source not a did:pkh", receipt: paying, proof: func(p *core.PaymentProof) { p.Source = payer }, want: "not a did:pkh"},
		{name: "payload not JSON", payload: `"x"`, want: "not a JSON object"},
		{name: "hash malformed", payload: `{"type":"hash","hash":"0x12"}`, want: "not a transaction hash"},
		{name: "signature not hex", payload: `{"type":"transaction","signature":"0xzz"}`, want: "not a signed transaction"},
		{name: "not a Tempo transaction", payload: `{"type":"transaction","signature":"0x02f8"}`, want: "0x76/0x78"},
		{name: "zero-amount proof", payload: `{"type":"proof","signature":"0x01"}`, want: "zero-amount"},
		{name: "unknown type", payload: `{"type":"card"}`, want: `type "card"`},
		{name: "transaction the chain refuses", payload: `{"type":"transaction","signature":"0x76aa"}`, want: "nonce too low"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, node := newMethod(t)
			h := tempotest.Hash(c.name)
			if c.receipt != nil {
				node.AddReceipt(c.receipt(h))
			}
			payload := c.payload
			if payload == "" {
				payload = hashPayload(h)
			}
			p := proof(payload)
			if c.proof != nil {
				c.proof(&p)
			}
			_, err := m.Verify(context.Background(), p)
			if core.KindOf(err) != core.KindInvalid {
				t.Fatalf("got %v (kind %v), want KindInvalid", err, core.KindOf(err))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to say %q", err, c.want)
			}
		})
	}
}

// A node that cannot answer is an outage (KindUnavailable), never a
// verdict on the payment.
func TestVerifyOutages(t *testing.T) {
	ctx := context.Background()
	h := tempotest.Hash("tx")
	t.Run("node down", func(t *testing.T) {
		m, node := newMethod(t)
		node.Close()
		_, err := m.Verify(ctx, proof(hashPayload(h)))
		if core.KindOf(err) != core.KindUnavailable {
			t.Fatalf("got %v", err)
		}
		if strings.Contains(err.Error(), node.URL) {
			t.Errorf("the RPC URL leaks into the error: %v", err)
		}
	})
	t.Run("HTTP 502", func(t *testing.T) {
		m, node := newMethod(t)
		node.FailHTTP(http.StatusBadGateway)
		if _, err := m.Verify(ctx, proof(hashPayload(h))); core.KindOf(err) != core.KindUnavailable {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("error object on a read", func(t *testing.T) {
		m, node := newMethod(t)
		node.FailMethod("eth_getTransactionReceipt", tempotest.Error{Code: -32005, Message: "rate limit exceeded"})
		_, err := m.Verify(ctx, proof(hashPayload(h)))
		if core.KindOf(err) != core.KindUnavailable || !strings.Contains(err.Error(), "-32005") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("node failure on a broadcast", func(t *testing.T) {
		m, node := newMethod(t)
		node.FailMethod("eth_sendRawTransactionSync", tempotest.Error{Code: -32603, Message: "internal error"})
		if _, err := m.Verify(ctx, proof(`{"type":"transaction","signature":"0x76aa"}`)); core.KindOf(err) != core.KindUnavailable {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("node without eth_sendRawTransactionSync", func(t *testing.T) {
		m, node := newMethod(t)
		node.FailMethod("eth_sendRawTransactionSync", tempotest.Error{Code: -32601, Message: "the method does not exist"})
		if _, err := m.Verify(ctx, proof(`{"type":"transaction","signature":"0x76aa"}`)); core.KindOf(err) != core.KindUnavailable {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("not JSON-RPC", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }))
		defer srv.Close()
		m, _ := New(Config{RPCURL: srv.URL})
		if _, err := m.Verify(ctx, proof(hashPayload(h))); core.KindOf(err) != core.KindUnavailable {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		m, _ := newMethod(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := m.Verify(cctx, proof(hashPayload(h)))
		if core.KindOf(err) != core.KindUnavailable || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestNew(t *testing.T) {
	for _, u := range []string{"", "rpc.tempo.xyz", "ftp://x", "http://"} {
		if _, err := New(Config{RPCURL: u}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	m, err := New(Config{RPCURL: "https://rpc.tempo.xyz"})
	if err != nil || m.Name() != "tempo" {
		t.Fatal(err)
	}
	// A request the method cannot check is a configuration error, not a
	// verdict on the payer.
	p := proof(hashPayload(tempotest.Hash("x")))
	p.Request.Recipient = "alice"
	if _, err := m.Verify(context.Background(), p); err == nil || core.KindOf(err) == core.KindInvalid {
		t.Errorf("non-address recipient: %v", err)
	}
}
