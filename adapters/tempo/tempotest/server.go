// Package tempotest is a stand-in for a Tempo node, for tests: an httptest
// server speaking the Ethereum JSON-RPC 2.0 wire format the tempo payment
// method uses (eth_getTransactionReceipt, eth_sendRawTransactionSync,
// eth_sendRawTransaction, eth_chainId), answering from transactions the
// test registers, plus builders of TIP-20 Transfer and TransferWithMemo logs
// and of mppx's attribution memo.
//
// It deliberately does not import package tempo: the logs and memos it
// writes are built by their own code from the token's ABI and mppx's
// Attribution.js, so a test that verifies them through tempo checks the
// reader against an independent writer.
package tempotest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/sha3"
)

// ChainID is what eth_chainId answers unless the test sets another.
const ChainID = 4217

// Log is one event log of a receipt.
type Log struct {
	Address string   // the token
	Topics  []string // 0x-prefixed 32-byte words
	Data    string   // 0x-prefixed
}

// Receipt is a mined transaction.
type Receipt struct {
	Hash   string // 0x + 64 hex
	From   string
	To     string
	Failed bool // status 0x0
	Logs   []Log
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Server is the stand-in node. Every method is safe for concurrent use.
type Server struct {
	// URL is the JSON-RPC endpoint.
	URL string

	srv *httptest.Server

	mu       sync.Mutex
	receipts map[string]Receipt // by lowercase hash
	raw      map[string]Receipt // by lowercase raw transaction
	errs     map[string]Error   // method -> error object to answer
	status   int                // HTTP status to answer instead, when not 0
	chainID  int64
	calls    []string
}

// NewServer starts a node that is closed when the test ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{receipts: map[string]Receipt{}, raw: map[string]Receipt{}, errs: map[string]Error{}, chainID: ChainID}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops the node; later calls fail to connect (an outage).
func (s *Server) Close() { s.srv.Close() }

// AddReceipt makes eth_getTransactionReceipt answer r for r.Hash.
func (s *Server) AddReceipt(r Receipt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.receipts[strings.ToLower(r.Hash)] = r
}

// AddRawTransaction makes eth_sendRawTransactionSync of raw mine r (and
// eth_sendRawTransaction return its hash); afterwards r is known by hash.
func (s *Server) AddRawTransaction(raw string, r Receipt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw[strings.ToLower(raw)] = r
}

// FailMethod makes every call of method answer the error object e.
func (s *Server) FailMethod(method string, e Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs[method] = e
}

// FailHTTP makes every call answer HTTP status (0: answer normally).
func (s *Server) FailHTTP(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// SetChainID sets what eth_chainId answers.
func (s *Server) SetChainID(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chainID = id
}

// Calls returns the JSON-RPC methods called so far, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

type request struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		http.Error(w, "JSON-RPC takes a POST of application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil || req.JSONRPC != "2.0" || len(req.ID) == 0 {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": nil, "error": Error{-32700, "parse error"}})
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, req.Method)
	status, rpcErr, failing := s.status, s.errs[req.Method], false
	if _, ok := s.errs[req.Method]; ok {
		failing = true
	}
	s.mu.Unlock()
	if status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	reply := func(result any) {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
	replyErr := func(e Error) {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": e})
	}
	if failing {
		replyErr(rpcErr)
		return
	}
	param := func() (string, bool) {
		if len(req.Params) < 1 {
			return "", false
		}
		var p string
		if json.Unmarshal(req.Params[0], &p) != nil || !strings.HasPrefix(p, "0x") {
			return "", false
		}
		return strings.ToLower(p), true
	}
	switch req.Method {
	case "eth_chainId":
		s.mu.Lock()
		id := s.chainID
		s.mu.Unlock()
		reply(fmt.Sprintf("0x%x", id))
	case "eth_getTransactionReceipt":
		h, ok := param()
		if !ok || len(h) != 66 {
			replyErr(Error{-32602, "invalid argument 0: hex string has length " + fmt.Sprint(len(h)-2) + ", want 64 for common.Hash"})
			return
		}
		s.mu.Lock()
		rc, found := s.receipts[h]
		s.mu.Unlock()
		if !found {
			reply(nil) // unknown or not yet mined
			return
		}
		reply(receiptJSON(rc))
	case "eth_sendRawTransactionSync", "eth_sendRawTransaction":
		raw, ok := param()
		if !ok {
			replyErr(Error{-32602, "invalid argument 0: json: cannot unmarshal hex string without 0x prefix"})
			return
		}
		s.mu.Lock()
		rc, found := s.raw[raw]
		if found {
			if _, mined := s.receipts[strings.ToLower(rc.Hash)]; mined {
				s.mu.Unlock()
				replyErr(Error{-32000, "already known"})
				return
			}
			s.receipts[strings.ToLower(rc.Hash)] = rc
		}
		s.mu.Unlock()
		if !found {
			replyErr(Error{-32000, "invalid transaction: nonce too low"})
			return
		}
		if req.Method == "eth_sendRawTransaction" {
			reply(rc.Hash)
			return
		}
		reply(receiptJSON(rc))
	default:
		replyErr(Error{-32601, "the method " + req.Method + " does not exist/is not available"})
	}
}

func receiptJSON(r Receipt) map[string]any {
	status := "0x1"
	if r.Failed {
		status = "0x0"
	}
	const block = "0x4b7c1a"
	blockHash := "0x" + strings.Repeat("b1", 32)
	logs := make([]map[string]any, len(r.Logs))
	for i, l := range r.Logs {
		topics := l.Topics
		if topics == nil {
			topics = []string{}
		}
		logs[i] = map[string]any{
			"address": l.Address, "topics": topics, "data": l.Data,
			"blockNumber": block, "blockHash": blockHash, "transactionHash": r.Hash,
			"transactionIndex": "0x0", "logIndex": fmt.Sprintf("0x%x", i), "removed": false,
		}
	}
	return map[string]any{
		"transactionHash": r.Hash, "transactionIndex": "0x0", "blockHash": blockHash, "blockNumber": block,
		"from": r.From, "to": r.To, "cumulativeGasUsed": "0xc350", "gasUsed": "0xc350", "effectiveGasPrice": "0x4a817c800",
		"contractAddress": nil, "logs": logs, "logsBloom": "0x" + strings.Repeat("00", 256), "status": status, "type": "0x76",
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// --- TIP-20 logs and mppx's memo ----------------------------------------------

func keccak(b []byte) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	return h.Sum(nil)
}

// TransferTopic and TransferWithMemoTopic are the TIP-20 event signatures
// (viem/tempo Abis.tip20: Transfer(address indexed from, address indexed
// to, uint256 amount); TransferWithMemo(address indexed from, address
// indexed to, uint256 amount, bytes32 indexed memo)).
var (
	TransferTopic         = "0x" + hex.EncodeToString(keccak([]byte("Transfer(address,address,uint256)")))
	TransferWithMemoTopic = "0x" + hex.EncodeToString(keccak([]byte("TransferWithMemo(address,address,uint256,bytes32)")))
)

func addressTopic(a string) string {
	return "0x" + strings.Repeat("0", 24) + strings.ToLower(strings.TrimPrefix(a, "0x"))
}

func word(amount *big.Int) string {
	return fmt.Sprintf("0x%064x", amount)
}

// TransferLog is the Transfer event of token moving amount from from to to.
func TransferLog(token, from, to string, amount int64) Log {
	return Log{Address: token, Topics: []string{TransferTopic, addressTopic(from), addressTopic(to)}, Data: word(big.NewInt(amount))}
}

// TransferWithMemoLog is the TransferWithMemo event of transferWithMemo.
func TransferWithMemoLog(token, from, to string, amount int64, memo [32]byte) Log {
	return Log{Address: token, Topics: []string{TransferWithMemoTopic, addressTopic(from), addressTopic(to), "0x" + hex.EncodeToString(memo[:])},
		Data: word(big.NewInt(amount))}
}

// Memo is the attribution memo mppx's tempo client puts in its
// transferWithMemo (node_modules/mppx/dist/tempo/Attribution.js, encode):
// keccak256("mpp")[0:4], version 1, keccak256(realm)[0:10], ten zero bytes
// for an anonymous client, keccak256(challengeID)[0:7].
func Memo(realm, challengeID string) [32]byte {
	var m [32]byte
	copy(m[0:4], keccak([]byte("mpp")))
	m[4] = 1
	copy(m[5:15], keccak([]byte(realm))[:10])
	copy(m[25:32], keccak([]byte(challengeID))[:7])
	return m
}

// Hash returns a transaction hash made from seed, for tests.
func Hash(seed string) string {
	return "0x" + hex.EncodeToString(keccak([]byte(seed)))
}
