// Package unkeytest is a stand-in for Unkey's key verification, for tests:
// an httptest server speaking the wire format of
// `POST /v2/keys.verifyKey` (root key as bearer, body {"key": "..."};
// HTTP 200 with {"meta":{"requestId"},"data":{"valid","code",...}} for
// every verdict; 400, 401 and 403 with Unkey's error envelope
// {"meta":{"requestId"},"error":{"title","detail","status","type"}}).
//
// Tests register keys with the verdict the server gives them; an unknown
// key is NOT_FOUND, as Unkey answers. The server checks the root key,
// counts calls, and can be made to fail, answer garbage or hang.
//
// It deliberately does not import package unkey: the adapter is checked
// against an independent reading of the wire format.
package unkeytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// VerifyPath is the path of the verification endpoint.
const VerifyPath = "/v2/keys.verifyKey"

// Codes of Unkey's verdicts.
const (
	Valid                   = "VALID"
	NotFound                = "NOT_FOUND"
	Forbidden               = "FORBIDDEN"
	InsufficientPermissions = "INSUFFICIENT_PERMISSIONS"
	InsufficientCredits     = "INSUFFICIENT_CREDITS"
	UsageExceeded           = "USAGE_EXCEEDED"
	RateLimited             = "RATE_LIMITED"
	Disabled                = "DISABLED"
	Expired                 = "EXPIRED"
)

// Key is what the server answers for one registered key: the `data` of the
// answer. Valid is derived from Code.
type Key struct {
	// Code is the verdict; "" means VALID.
	Code string
	// KeyID is Unkey's id of the key ("key_..."); AddKey makes one up when
	// empty.
	KeyID string
	// Name is the key's name, omitted when empty.
	Name string
	// Credits is the remaining credits, omitted when nil (unlimited).
	Credits *int64
	// Expires is the expiry (sent as Unix milliseconds), omitted when zero.
	Expires time.Time
	// Ratelimits are the limits checked, sent as they are.
	Ratelimits []Ratelimit
}

// Ratelimit is one entry of `data.ratelimits`. Unkey sends Reset as the
// Unix time in milliseconds when the window resets (its specification
// calls it a duration in milliseconds; the adapter reads both).
type Ratelimit struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Exceeded  bool   `json:"exceeded"`
	Limit     int64  `json:"limit"`
	Duration  int64  `json:"duration"`
	Reset     int64  `json:"reset"`
	Remaining int64  `json:"remaining"`
	AutoApply bool   `json:"autoApply"`
}

// Server is the stand-in. Every method is safe for concurrent use.
type Server struct {
	// URL is the base URL (no trailing slash), the adapter's base URL.
	URL string

	srv  *httptest.Server
	stop chan struct{}
	once sync.Once

	calls atomic.Int64
	seq   atomic.Int64

	mu        sync.Mutex
	keys      map[string]Key
	rootKeys  map[string]bool // root key -> may verify
	fail      int
	rawStatus int
	rawBody   string
	delay     time.Duration
	received  []string
}

// NewServer starts a server accepting rootKey (with permission to verify
// keys); it is closed when the test ends.
func NewServer(tb testing.TB, rootKey string) *Server {
	tb.Helper()
	s := &Server{
		stop:     make(chan struct{}),
		keys:     map[string]Key{},
		rootKeys: map[string]bool{rootKey: true},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+VerifyPath, s.verify)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close releases hanging handlers and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.stop)
		s.srv.Close()
	})
}

// AddKey registers a key with its verdict (replacing an earlier one).
func (s *Server) AddKey(key string, k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k.KeyID == "" {
		k.KeyID = fmt.Sprintf("key_standin%04d", len(s.keys)+1)
	}
	s.keys[key] = k
}

// RemoveKey forgets a key: it is NOT_FOUND from now on.
func (s *Server) RemoveKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
}

// AddRootKey accepts another root key; without canVerify it is a root key
// lacking the api.*.verify_key permission, answered 403.
func (s *Server) AddRootKey(rootKey string, canVerify bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rootKeys[rootKey] = canVerify
}

// Fail makes every verification answer this status with an error envelope
// (e.g. 500, 503, 429); 0 restores normal answers.
func (s *Server) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = status
}

// Raw makes every verification answer this status and body as they are
// (e.g. 200 and a malformed body); status 0 restores normal answers.
func (s *Server) Raw(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rawStatus, s.rawBody = status, body
}

// Delay holds every answer for d (or until the client gives up or the
// server closes); 0 answers at once.
func (s *Server) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Calls is the number of verification requests received, whatever their
// outcome.
func (s *Server) Calls() int { return int(s.calls.Load()) }

// Received lists the keys of the verification requests, in order.
func (s *Server) Received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.received...)
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	reqID := fmt.Sprintf("req_stand_in_%d", s.seq.Add(1))
	s.mu.Lock()
	delay, fail, rawStatus, rawBody := s.delay, s.fail, s.rawStatus, s.rawBody
	s.mu.Unlock()

	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
	}
	if rawStatus != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rawStatus)
		io.WriteString(w, rawBody)
		return
	}
	if fail != 0 {
		writeError(w, reqID, fail, http.StatusText(fail), "the stand-in was told to fail", "https://unkey.com/docs/errors/unkey/application/unexpected_error")
		return
	}

	root, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	canVerify, known := s.rootKeys[root]
	s.mu.Unlock()
	switch {
	case !ok || root == "":
		writeError(w, reqID, 400, "Bad Request", "Authorization header must use the Bearer scheme with a root key", "https://unkey.com/docs/errors/unkey/authentication/malformed")
		return
	case !known:
		writeError(w, reqID, 401, "Unauthorized", "The provided root key is invalid.", "https://unkey.com/docs/errors/unkey/authentication/key_not_found")
		return
	case !canVerify:
		writeError(w, reqID, 403, "Forbidden", "Missing one of these permissions: ['api.*.verify_key', 'api.<API_ID>.verify_key']", "https://unkey.com/docs/errors/unkey/authorization/insufficient_permissions")
		return
	}

	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, reqID, 400, "Bad Request", "Content-Type must be application/json", "https://unkey.com/docs/errors/unkey/application/invalid_input")
		return
	}
	var body struct {
		Key *string `json:"key"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil || body.Key == nil {
		writeError(w, reqID, 400, "Bad Request", "POST request body for '/v2/keys.verifyKey' failed to validate schema", "https://unkey.com/docs/errors/unkey/application/invalid_input")
		return
	}
	key := *body.Key
	if n := utf8.RuneCountInString(key); n < 1 || n > 512 {
		writeError(w, reqID, 400, "Bad Request", "key must be 1 to 512 characters", "https://unkey.com/docs/errors/unkey/application/invalid_input")
		return
	}
	s.mu.Lock()
	s.received = append(s.received, key)
	k, found := s.keys[key]
	s.mu.Unlock()

	data := map[string]any{"valid": false, "code": NotFound}
	if found {
		code := k.Code
		if code == "" {
			code = Valid
		}
		data = map[string]any{"valid": code == Valid, "code": code, "keyId": k.KeyID, "enabled": code != Disabled}
		if k.Name != "" {
			data["name"] = k.Name
		}
		if k.Credits != nil {
			data["credits"] = *k.Credits
		}
		if !k.Expires.IsZero() {
			data["expires"] = k.Expires.UnixMilli()
		}
		if len(k.Ratelimits) > 0 {
			data["ratelimits"] = k.Ratelimits
		}
	}
	writeJSON(w, 200, map[string]any{"meta": map[string]any{"requestId": reqID}, "data": data})
}

func writeError(w http.ResponseWriter, reqID string, status int, title, detail, typ string) {
	writeJSON(w, status, map[string]any{
		"meta":  map[string]any{"requestId": reqID},
		"error": map[string]any{"title": title, "detail": detail, "status": status, "type": typ},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
