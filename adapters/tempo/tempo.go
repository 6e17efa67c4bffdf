// Package tempo is the `tempo` payment method of the HTTP Payment scheme's
// charge intent (ports.PaymentMethod): it proves on the Tempo chain,
// through a node's JSON-RPC endpoint (SERVICE_PAYMENT_RPC_URL), that a
// credential pays a request in full, the way mppx 0.11.0's server does
// (node_modules/mppx/dist/tempo/server/Charge.js):
//
//   - payload {"type":"hash","hash":"0x…"} (push mode: the client sent the
//     transaction): eth_getTransactionReceipt of the hash;
//   - payload {"type":"transaction","signature":"0x76…"} (pull mode, mppx's
//     default for a local account: the client signed, the server
//     broadcasts): eth_sendRawTransactionSync of the signed transaction,
//     which answers its receipt once mined.
//
// The receipt must be successful (status 0x1) and hold a TIP-20
// TransferWithMemo event (or, for a request without a challenge, a
// Transfer) of the request's currency, from the payer (the credential's
// did:pkh source, else the transaction's sender), to the recipient, of at
// least the amount; its memo must be mppx's attribution memo bound to the
// server (realm) and to the challenge id, so a transfer made for one
// challenge cannot pay another. The receipt's reference is the
// transaction hash; the ledger spends it once.
package tempo

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/sha3"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.PaymentMethod = (*Method)(nil)

// Name is the payment method's name in challenges and credentials.
const Name = "tempo"

// Config configures the method.
type Config struct {
	// RPCURL is the node's JSON-RPC endpoint (SERVICE_PAYMENT_RPC_URL),
	// e.g. https://rpc.tempo.xyz.
	RPCURL string
	// ChainID, when set, refuses credentials whose did:pkh source names
	// another chain.
	ChainID int64
	// Client makes the calls; default: 30 s timeout (a pull-mode broadcast
	// waits for the transaction to be mined), no redirects.
	Client *http.Client
	// Now stamps receipts; default time.Now.
	Now func() time.Time
}

// Method is the tempo charge method.
type Method struct {
	cfg    Config
	client *http.Client
	now    func() time.Time
	ids    atomic.Int64
}

// New checks cfg and returns the method.
func New(cfg Config) (*Method, error) {
	u, err := url.Parse(cfg.RPCURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tempo: RPC URL %q is not an http(s) URL", cfg.RPCURL)
	}
	m := &Method{cfg: cfg, client: cfg.Client, now: cfg.Now}
	if m.client == nil {
		m.client = &http.Client{
			Timeout:       30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m, nil
}

// Name is "tempo".
func (m *Method) Name() string { return Name }

var (
	hashRe    = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	sigRe     = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	addressRe = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	pkhRe     = regexp.MustCompile(`^did:pkh:eip155:([0-9]+):(0x[0-9a-fA-F]{40})$`)
)

// Verify proves that proof pays proof.Request on the chain. A payment that
// does not is a core.Error of KindInvalid; a node that cannot be asked,
// KindUnavailable.
func (m *Method) Verify(ctx context.Context, proof core.PaymentProof) (core.PaymentReceipt, error) {
	var payload struct {
		Type      string `json:"type"`
		Hash      string `json:"hash"`
		Signature string `json:"signature"`
	}
	if err := json.Unmarshal(proof.Payload, &payload); err != nil {
		return core.PaymentReceipt{}, core.Invalidf("tempo: the payload is not a JSON object")
	}
	want, err := m.expectation(proof)
	if err != nil {
		return core.PaymentReceipt{}, err
	}
	var rc *receipt
	switch payload.Type {
	case "hash":
		if !hashRe.MatchString(payload.Hash) {
			return core.PaymentReceipt{}, core.Invalidf("tempo: the payload's hash is not a transaction hash")
		}
		if err := m.call(ctx, "eth_getTransactionReceipt", []any{payload.Hash}, &rc, false); err != nil {
			return core.PaymentReceipt{}, err
		}
		if rc == nil {
			return core.PaymentReceipt{}, core.Invalidf("tempo: transaction %s is unknown to the chain (not mined)", payload.Hash)
		}
		if !strings.EqualFold(rc.TransactionHash, payload.Hash) {
			return core.PaymentReceipt{}, core.Invalidf("tempo: the node answered the receipt of another transaction")
		}
	case "transaction":
		if !sigRe.MatchString(payload.Signature) || len(payload.Signature)%2 != 0 {
			return core.PaymentReceipt{}, core.Invalidf("tempo: the payload's signature is not a signed transaction")
		}
		if t := strings.ToLower(payload.Signature[:4]); t != "0x76" && t != "0x78" {
			return core.PaymentReceipt{}, core.Invalidf("tempo: only Tempo (0x76/0x78) transactions are accepted")
		}
		if err := m.call(ctx, "eth_sendRawTransactionSync", []any{payload.Signature}, &rc, true); err != nil {
			return core.PaymentReceipt{}, err
		}
		if rc == nil {
			return core.PaymentReceipt{}, core.Unavailablef(errors.New("no receipt"), "tempo: the node broadcast the transaction but answered no receipt")
		}
	case "proof":
		return core.PaymentReceipt{}, core.Invalidf("tempo: proof credentials pay zero-amount challenges only")
	default:
		return core.PaymentReceipt{}, core.Invalidf("tempo: payload type %q is not hash or transaction", payload.Type)
	}
	if !hashRe.MatchString(rc.TransactionHash) {
		return core.PaymentReceipt{}, core.Unavailablef(errors.New("bad receipt"), "tempo: the node answered a receipt without a transaction hash")
	}
	if rc.Status != "0x1" {
		return core.PaymentReceipt{}, core.Invalidf("tempo: transaction %s failed (status %s)", rc.TransactionHash, rc.Status)
	}
	if want.sender == "" {
		want.sender = strings.ToLower(rc.From)
	}
	if err := want.match(rc); err != nil {
		return core.PaymentReceipt{}, err
	}
	return core.PaymentReceipt{
		Method:    Name,
		Reference: strings.ToLower(rc.TransactionHash),
		Status:    "success",
		Timestamp: m.now().UTC(),
	}, nil
}

// expectation is what the receipt must show.
type expectation struct {
	currency, recipient, sender string // lowercase addresses; sender empty: the transaction's
	amount                      *big.Int
	memo                        func(memo []byte) bool // nil: any transfer, memo or not
}

func (m *Method) expectation(p core.PaymentProof) (expectation, error) {
	var e expectation
	if !addressRe.MatchString(p.Request.Currency) || !addressRe.MatchString(p.Request.Recipient) {
		return e, fmt.Errorf("tempo: the request's currency and recipient must be addresses (got %q, %q)", p.Request.Currency, p.Request.Recipient)
	}
	e.currency, e.recipient = strings.ToLower(p.Request.Currency), strings.ToLower(p.Request.Recipient)
	amount, ok := new(big.Int).SetString(p.Request.Amount, 10)
	if !ok || amount.Sign() <= 0 {
		return e, fmt.Errorf("tempo: the request's amount %q is not a positive integer", p.Request.Amount)
	}
	e.amount = amount
	if p.Source != "" {
		s := pkhRe.FindStringSubmatch(p.Source)
		if s == nil {
			return e, core.Invalidf("tempo: the credential's source %q is not a did:pkh:eip155 address", p.Source)
		}
		if chain, _ := strconv.ParseInt(s[1], 10, 64); m.cfg.ChainID != 0 && chain != m.cfg.ChainID {
			return e, core.Invalidf("tempo: the credential pays on chain %s, this service takes chain %d", s[1], m.cfg.ChainID)
		}
		e.sender = strings.ToLower(s[2])
	}
	if p.ChallengeID != "" {
		e.memo = func(memo []byte) bool { return boundMemo(memo, p.Realm, p.ChallengeID) }
	}
	return e, nil
}

var (
	transferTopic         = topic("Transfer(address,address,uint256)")
	transferWithMemoTopic = topic("TransferWithMemo(address,address,uint256,bytes32)")
	mppTag                = keccak([]byte("mpp"))[:4]
)

func topic(sig string) string { return "0x" + hex.EncodeToString(keccak([]byte(sig))) }

func keccak(b []byte) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	return h.Sum(nil)
}

// boundMemo checks mppx's attribution memo (tempo/Attribution.js):
// keccak256("mpp")[0:4], version 1, keccak256(realm)[0:10] at 5..14,
// keccak256(challengeID)[0:7] at 25..31 (bytes 15..24 name the client).
func boundMemo(memo []byte, realm, challengeID string) bool {
	return len(memo) == 32 && bytes.Equal(memo[0:4], mppTag) && memo[4] == 1 &&
		bytes.Equal(memo[5:15], keccak([]byte(realm))[:10]) &&
		bytes.Equal(memo[25:32], keccak([]byte(challengeID))[:7])
}

// match finds a transfer log paying e in rc, or says what is missing.
func (e expectation) match(rc *receipt) error {
	var near string // the closest miss, for the error
	for _, l := range rc.Logs {
		if !strings.EqualFold(l.Address, e.currency) || len(l.Topics) < 3 {
			continue
		}
		t0 := strings.ToLower(l.Topics[0])
		var memo []byte
		switch {
		case t0 == transferWithMemoTopic && len(l.Topics) == 4:
			memo, _ = hex.DecodeString(strings.TrimPrefix(l.Topics[3], "0x"))
		case t0 == transferTopic && len(l.Topics) == 3:
		default:
			continue
		}
		from, to := topicAddress(l.Topics[1]), topicAddress(l.Topics[2])
		amount, ok := wordInt(l.Data)
		if !ok {
			continue
		}
		switch {
		case to != e.recipient:
			near = "no transfer of the currency to the recipient"
		case amount.Cmp(e.amount) < 0:
			near = fmt.Sprintf("the transfer to the recipient is %s, less than %s", amount, e.amount)
		case from != e.sender:
			near = "the transfer to the recipient is not from the payer"
		case e.memo != nil && memo == nil:
			near = "the transfer carries no memo bound to the challenge"
		case e.memo != nil && !e.memo(memo):
			near = "the transfer's memo is bound to another challenge or server"
		default:
			return nil
		}
	}
	if near == "" {
		near = "no transfer of the currency to the recipient"
	}
	return core.Invalidf("tempo: transaction %s: %s", rc.TransactionHash, near)
}

// topicAddress is the address in an indexed address topic, lowercase.
func topicAddress(t string) string {
	t = strings.ToLower(strings.TrimPrefix(t, "0x"))
	if len(t) != 64 {
		return ""
	}
	return "0x" + t[24:]
}

func wordInt(data string) (*big.Int, bool) {
	d := strings.TrimPrefix(data, "0x")
	if len(d) != 64 {
		return nil, false
	}
	return new(big.Int).SetString(d, 16)
}

// receipt is the part of an eth_getTransactionReceipt answer used here.
type receipt struct {
	TransactionHash string `json:"transactionHash"`
	From            string `json:"from"`
	Status          string `json:"status"`
	Logs            []struct {
		Address string   `json:"address"`
		Topics  []string `json:"topics"`
		Data    string   `json:"data"`
	} `json:"logs"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// call makes one JSON-RPC call. Transport failures, HTTP errors and
// unreadable answers are KindUnavailable. An error object is
// KindUnavailable too for a read; for a broadcast (rejecting is a
// verdict on the transaction) it is KindInvalid, except the node's own
// failures (-32603 internal error, -32005 limit exceeded, -32601 method
// not found).
func (m *Method) call(ctx context.Context, method string, params []any, result any, broadcast bool) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ids.Add(1), "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.cfg.RPCURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return core.Unavailablef(redact(err), "tempo: %s", method)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return core.Unavailablef(err, "tempo: %s: reading the answer", method)
	}
	if resp.StatusCode != http.StatusOK {
		return core.Unavailablef(fmt.Errorf("HTTP %d", resp.StatusCode), "tempo: %s", method)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return core.Unavailablef(err, "tempo: %s: the answer is not JSON-RPC", method)
	}
	if env.Error != nil {
		e := fmt.Errorf("JSON-RPC error %d: %s", env.Error.Code, env.Error.Message)
		switch {
		case !broadcast, env.Error.Code == -32603, env.Error.Code == -32005, env.Error.Code == -32601:
			return core.Unavailablef(e, "tempo: %s", method)
		}
		return core.Invalidf("tempo: the chain refused the transaction: %s", env.Error.Message)
	}
	if len(env.Result) == 0 {
		return core.Unavailablef(errors.New("neither result nor error"), "tempo: %s", method)
	}
	if err := json.Unmarshal(env.Result, result); err != nil {
		return core.Unavailablef(err, "tempo: %s: unexpected result", method)
	}
	return nil
}

// redact drops the URL from a transport error: an RPC URL may carry an
// API key in its path or query.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
