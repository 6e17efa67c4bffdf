//go:build hosted

package guard

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// MaxMCPBody bounds the JSON-RPC body the guard reads to see whether it
// calls a tool; a larger body answers 413 before any payment is asked.
const MaxMCPBody = 1 << 20

// Deps configure the guard.
type Deps struct {
	// Keys verifies customer keys; nil when no key source is configured.
	Keys ports.Keys
	// Payments issues and checks payment challenges; nil when payment is
	// not offered (SERVICE_PAYMENT_SECRET unset).
	Payments ports.Payments
	// AdminToken is required on /admin and for the console (never empty
	// in the hosted build).
	AdminToken string
	// AdminUnlocksAPI lets a valid X-Admin-Token call /api and MCP too.
	AdminUnlocksAPI bool
	// Realm names the protection space; "" means the request's host name.
	Realm string
	// Internal is a random per-process token the console's inspector sends
	// in InternalHeader on its loopback calls of /api and /mcp; it never
	// leaves the process, so it opens nothing to anyone else.
	Internal string
	// Discovery is the OpenAPI document as JSON with x-payment-info on the
	// paid operations, served at /openapi.json for payment clients'
	// discovery (nil: not served).
	Discovery []byte
	// Operator tells whether a console request carries a signed-in
	// operator's session.
	Operator func(*http.Request) bool
	// Loading returns the error reads answer while the search index is
	// still loading after a start, nil once it is loaded (nil func: never).
	// A charged call is then refused with 503 before any key is counted or
	// payment taken: the answer would be a 503 the caller paid for.
	Loading func() error
	Log     *zap.Logger
}

// Guard is the middleware.
type Guard struct{ d Deps }

// New returns the guard.
func New(d Deps) *Guard {
	if d.Log == nil {
		d.Log = zap.NewNop()
	}
	if d.Operator == nil {
		d.Operator = func(*http.Request) bool { return false }
	}
	return &Guard{d: d}
}

// area is what a path belongs to.
type area int

const (
	public area = iota
	api
	mcpCall // POST /mcp or /mcp/message: charged per tools/call
	mcpFree // the rest of MCP: initialize, streams, session end
	admin
	consoleOpen // sign-in page and static assets
	consolePage
)

func classify(r *http.Request) area {
	p := r.URL.Path
	switch {
	case p == "/healthz" || p == "/readyz" || p == "/openapi.yaml" || p == "/openapi.json" || p == "/docs" || strings.HasPrefix(p, "/docs/"):
		return public
	case p == "/api" || strings.HasPrefix(p, "/api/"):
		return api
	case p == "/mcp" || p == "/mcp/message":
		if r.Method == http.MethodPost {
			return mcpCall
		}
		return mcpFree
	case p == "/mcp/sse" || strings.HasPrefix(p, "/mcp/"):
		return mcpFree
	case p == "/admin" || strings.HasPrefix(p, "/admin/") || p == "/metrics":
		return admin
	case p == "/signin" || p == "/signout" || strings.HasPrefix(p, "/console/static/"):
		return consoleOpen
	}
	return consolePage
}

// Wrap puts the guard in front of next.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/openapi.json" && g.d.Discovery != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "public, max-age=300")
			_, _ = w.Write(g.d.Discovery)
			return
		}
		switch classify(r) {
		case public, consoleOpen, mcpFree:
			next.ServeHTTP(w, r)
		case admin:
			if !g.adminToken(r) {
				writeError(w, http.StatusUnauthorized, "admin token missing or wrong: /admin takes neither API keys nor payments; send header X-Admin-Token with the value of SERVICE_ADMIN_TOKEN", nil)
				return
			}
			next.ServeHTTP(w, r)
		case consolePage:
			if !g.d.Operator(r) {
				// The hosted console is for operators only.
				http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			next.ServeHTTP(w, r)
		case api:
			if g.loading(w) {
				return
			}
			call := core.Call{Host: r.Host, Method: r.Method, PathQuery: r.URL.RequestURI(), What: "one call of " + r.URL.Path}
			if g.admit(w, r, call) {
				next.ServeHTTP(w, r)
			}
		case mcpCall:
			g.serveMCP(w, r, next)
		}
	})
}

// serveMCP charges a JSON-RPC POST only when it calls a tool: connecting,
// listing the tools and notifications are free.
func (g *Guard) serveMCP(w http.ResponseWriter, r *http.Request, next http.Handler) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMCPBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "JSON-RPC body exceeds "+strconv.Itoa(MaxMCPBody>>10)+" KiB", nil)
			return
		}
		writeError(w, http.StatusBadRequest, "unreadable body: "+err.Error(), nil)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	tools := toolCalls(body)
	if len(tools) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	if g.loading(w) {
		return
	}
	sum := sha256.Sum256(body)
	call := core.Call{Host: r.Host, Method: r.Method, PathQuery: r.URL.RequestURI(),
		BodyDigest: "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":",
		What:       "MCP tools/call " + strings.Join(tools, ", ")}
	if g.admit(w, r, call) {
		next.ServeHTTP(w, r)
	}
}

// toolCalls returns the names of the tools a JSON-RPC message (or batch)
// calls. A body that is not JSON-RPC is left to the MCP server to refuse.
func toolCalls(body []byte) []string {
	type msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var one msg
	var many []msg
	t := bytes.TrimSpace(body)
	switch {
	case len(t) > 0 && t[0] == '[':
		if json.Unmarshal(t, &many) != nil {
			return nil
		}
	case json.Unmarshal(t, &one) == nil:
		many = []msg{one}
	}
	var out []string
	for _, m := range many {
		if m.Method == "tools/call" {
			name := m.Params.Name
			if name == "" {
				name = "(unnamed)"
			}
			out = append(out, name)
		}
	}
	return out
}

// loading answers 503 with Retry-After while the search index is still
// loading after a start, and tells whether it did.
func (g *Guard) loading(w http.ResponseWriter) bool {
	if g.d.Loading == nil {
		return false
	}
	err := g.d.Loading()
	if err == nil {
		return false
	}
	writeError(w, http.StatusServiceUnavailable, err.Error()+" (nothing was charged)", map[string]string{"Retry-After": "2"})
	return true
}

// admit applies the decision order to a charged call and answers the
// refusal itself; true lets the call through.
func (g *Guard) admit(w http.ResponseWriter, r *http.Request, call core.Call) bool {
	if g.d.Internal != "" {
		if v := r.Header.Get(InternalHeader); v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(g.d.Internal)) == 1 {
			return true
		}
	}
	if g.d.AdminUnlocksAPI && r.Header.Get("X-Admin-Token") != "" && g.adminToken(r) {
		return true
	}
	scheme, cred, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return g.bearer(w, r, strings.TrimSpace(cred))
	case strings.EqualFold(scheme, "Payment"):
		return g.pay(w, r, call)
	}
	// No credential (or one of a scheme this service does not take).
	if g.d.Payments != nil {
		g.challenge(w, r, g.d.Payments.Challenge(r.Context(), call), http.StatusPaymentRequired)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="`+g.realm(r)+`"`)
	writeError(w, http.StatusUnauthorized, "an API key is required: send Authorization: Bearer <key>", nil)
	return false
}

func (g *Guard) bearer(w http.ResponseWriter, r *http.Request, key string) bool {
	invalid := func(msg string) bool {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+g.realm(r)+`", error="invalid_token", error_description="`+msg+`"`)
		writeError(w, http.StatusUnauthorized, msg, nil)
		return false
	}
	if g.d.Keys == nil {
		return invalid("this service takes no API keys")
	}
	if key == "" {
		return invalid("the Bearer credential is empty")
	}
	v, err := g.d.Keys.Check(r.Context(), key)
	if err != nil {
		// An outage of the key service is not a bad key.
		g.d.Log.Error("key service unavailable", zap.Error(err))
		writeError(w, http.StatusServiceUnavailable, "the key service cannot be reached; retry shortly", map[string]string{"Retry-After": "5"})
		return false
	}
	switch {
	case v.Valid:
		return true
	case v.Code == core.KeyRateLimited || v.Code == core.KeyUsageExceeded:
		secs := int(v.RetryAfter.Round(time.Second) / time.Second)
		if secs <= 0 {
			secs = 60
		}
		msg := "this key is rate-limited; retry after " + strconv.Itoa(secs) + " s"
		if v.Code == core.KeyUsageExceeded {
			msg = "this key has used its quota; retry after " + strconv.Itoa(secs) + " s or raise the quota"
		}
		writeError(w, http.StatusTooManyRequests, msg, map[string]string{"Retry-After": strconv.Itoa(secs)})
		return false
	case v.Code == core.KeyExpired:
		return invalid("the API key has expired")
	case v.Code == core.KeyDisabled:
		return invalid("the API key is disabled")
	case v.Code == core.KeyForbidden || v.Code == core.KeyInsufficientPermissions:
		return invalid("the API key may not call this service")
	}
	return invalid("unknown API key")
}

func (g *Guard) pay(w http.ResponseWriter, r *http.Request, call core.Call) bool {
	if g.d.Payments == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+g.realm(r)+`"`)
		writeError(w, http.StatusUnauthorized, "this service takes no payments; send Authorization: Bearer <key>", nil)
		return false
	}
	_, receipt, err := g.d.Payments.Pay(r.Context(), call, r.Header.Get("Authorization"))
	var refused *core.PaymentRefused
	switch {
	case errors.As(err, &refused):
		g.challenge(w, r, refused.Challenge, http.StatusPaymentRequired)
		return false
	case err != nil:
		g.d.Log.Error("payment verification unavailable", zap.Error(err))
		writeError(w, http.StatusServiceUnavailable, "payments cannot be verified right now; retry shortly (nothing was charged twice: the credential stays unused)", map[string]string{"Retry-After": "5"})
		return false
	}
	w.Header().Set("Payment-Receipt", receipt)
	w.Header().Set("Cache-Control", "private")
	return true
}

// challenge answers 402 with a fresh challenge and its problem body.
func (g *Guard) challenge(w http.ResponseWriter, r *http.Request, c core.PaymentChallenge, status int) {
	h := w.Header()
	h.Set("WWW-Authenticate", c.Header)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(c.Problem)
}

func (g *Guard) adminToken(r *http.Request) bool {
	if g.d.AdminToken == "" {
		return false
	}
	got := sha256.Sum256([]byte(r.Header.Get("X-Admin-Token")))
	want := sha256.Sum256([]byte(g.d.AdminToken))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

func (g *Guard) realm(r *http.Request) string {
	if g.d.Realm != "" {
		return g.d.Realm
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.Trim(host, "[]\"")
}

func writeError(w http.ResponseWriter, status int, msg string, headers map[string]string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	_, _ = w.Write(b)
}
