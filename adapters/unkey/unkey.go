// Package unkey implements ports.KeyVerifier with Unkey's key verification,
// `POST {BaseURL}/v2/keys.verifyKey`, authenticated with a root key
// (`Authorization: Bearer <root key>`), body {"key": "..."}.
//
// Unkey answers every verdict with HTTP 200:
//
//	{"meta":{"requestId":"req_..."},
//	 "data":{"valid":false,"code":"RATE_LIMITED","keyId":"key_...","name":"...",
//	         "credits":0,"ratelimits":[{"name":"requests","exceeded":true,"reset":1764000000000,...}]}}
//
// and that is the only answer that becomes a verdict. Anything else is an
// error (the key service could not answer, never a bad key): a root key
// lacking the verify permission (403 with Unkey's error envelope), an
// unknown root key (401), Unkey's own rate limit (429), 5xx, no answer
// within the timeout, a refused connection, an answer that is not the
// documented JSON. Errors are *core.Error of kind KindUnavailable and never
// contain the key nor the root key.
package unkey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// DefaultBaseURL is Unkey's API.
const DefaultBaseURL = "https://api.unkey.com"

// DefaultTimeout bounds one verification when Config.Timeout is zero: the
// guard is on every request's path.
const DefaultTimeout = 2 * time.Second

// VerifyPath is the path of the verification endpoint under the base URL.
const VerifyPath = "/v2/keys.verifyKey"

// MaxKeyLen is the longest key Unkey verifies (in characters); a longer one
// cannot be a key and is NOT_FOUND without asking.
const MaxKeyLen = 512

// maxBodyBytes caps an answer; a verdict is well under a kilobyte.
const maxBodyBytes = 1 << 20

// Config tells the verifier where Unkey is and how to authenticate.
type Config struct {
	// BaseURL is everything before /v2/keys.verifyKey (SERVICE_UNKEY_URL);
	// "" means DefaultBaseURL.
	BaseURL string
	// RootKey is the Unkey root key with the api.*.verify_key (or
	// api.<id>.verify_key) permission (SERVICE_UNKEY_ROOT_KEY). Required.
	RootKey string
	// Timeout bounds each verification; 0 means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient is used for every request; nil means a client that does
	// not follow redirects (a redirect is an error, and the root key is
	// never sent elsewhere).
	HTTPClient *http.Client
	// Now is the clock used to turn a rate limit's reset time into a
	// RetryAfter; nil means time.Now.
	Now func() time.Time
}

// Verifier asks Unkey about keys. Safe for concurrent use.
type Verifier struct {
	url     string
	rootKey string
	timeout time.Duration
	client  *http.Client
	now     func() time.Time
}

var _ ports.KeyVerifier = (*Verifier)(nil)

// New validates cfg and returns the verifier. It does not contact Unkey.
func New(cfg Config) (*Verifier, error) {
	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, core.Invalidf("unkey: base URL %q is not an http(s) URL such as %s", base, DefaultBaseURL)
	}
	root := strings.TrimSpace(cfg.RootKey)
	if root == "" {
		return nil, core.Invalidf("unkey: the root key is empty")
	}
	if strings.ContainsAny(root, " \t\r\n") {
		return nil, core.Invalidf("unkey: the root key contains white space")
	}
	if cfg.Timeout < 0 {
		return nil, core.Invalidf("unkey: timeout %v is negative", cfg.Timeout)
	}
	v := &Verifier{
		url:     strings.TrimRight(base, "/") + VerifyPath,
		rootKey: root,
		timeout: cfg.Timeout,
		client:  cfg.HTTPClient,
		now:     cfg.Now,
	}
	if v.timeout == 0 {
		v.timeout = DefaultTimeout
	}
	if v.client == nil {
		v.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if v.now == nil {
		v.now = time.Now
	}
	return v, nil
}

// URL is the verification endpoint asked.
func (v *Verifier) URL() string { return v.url }

// Verify implements ports.KeyVerifier. An empty key or one longer than
// MaxKeyLen characters is NOT_FOUND without asking Unkey (Unkey would
// refuse the request with 400).
func (v *Verifier) Verify(ctx context.Context, key string) (core.KeyVerdict, error) {
	if key == "" || utf8.RuneCountInString(key) > MaxKeyLen {
		return core.KeyVerdict{Valid: false, Code: core.KeyNotFound}, nil
	}
	verdict, err := v.verify(ctx, key)
	if err != nil {
		return core.KeyVerdict{}, core.Unavailablef(v.redact(err, key), "unkey: verifying an API key")
	}
	return verdict, nil
}

// answer is the documented 200 answer (fields this adapter reads).
type answer struct {
	Meta struct {
		RequestID string `json:"requestId"`
	} `json:"meta"`
	Data *struct {
		Valid      *bool       `json:"valid"`
		Code       string      `json:"code"`
		KeyID      string      `json:"keyId"`
		Name       string      `json:"name"`
		Ratelimits []ratelimit `json:"ratelimits"`
	} `json:"data"`
}

type ratelimit struct {
	Name     string `json:"name"`
	Exceeded bool   `json:"exceeded"`
	// Reset is when the window resets: Unkey sends the Unix time in
	// milliseconds (its specification says a duration in milliseconds).
	Reset int64 `json:"reset"`
}

// errorEnvelope is Unkey's error answer.
type errorEnvelope struct {
	Meta struct {
		RequestID string `json:"requestId"`
	} `json:"meta"`
	Error *struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Status int    `json:"status"`
		Type   string `json:"type"`
	} `json:"error"`
}

func (v *Verifier) verify(ctx context.Context, key string) (core.KeyVerdict, error) {
	body, err := json.Marshal(struct {
		Key string `json:"key"`
	}{key})
	if err != nil {
		return core.KeyVerdict{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, v.url, bytes.NewReader(body))
	if err != nil {
		return core.KeyVerdict{}, fmt.Errorf("POST %s: %w", v.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+v.rootKey)
	resp, err := v.client.Do(req)
	if err != nil {
		var ue *url.Error // it repeats the method and URL
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return core.KeyVerdict{}, fmt.Errorf("POST %s: %w", v.url, v.cause(ctx, rctx, err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return core.KeyVerdict{}, fmt.Errorf("POST %s: reading the answer: %w", v.url, v.cause(ctx, rctx, err))
	}
	if len(raw) > maxBodyBytes {
		return core.KeyVerdict{}, fmt.Errorf("POST %s: answer exceeds %d bytes", v.url, maxBodyBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return core.KeyVerdict{}, fmt.Errorf("POST %s: HTTP %s%s", v.url, resp.Status, v.problem(resp.StatusCode, raw))
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return core.KeyVerdict{}, fmt.Errorf("POST %s: the answer is not Unkey's verification JSON: %w", v.url, err)
	}
	return v.verdict(a)
}

// verdict turns a 200 answer into a verdict, refusing inconsistent ones.
func (v *Verifier) verdict(a answer) (core.KeyVerdict, error) {
	bad := func(why string) (core.KeyVerdict, error) {
		return core.KeyVerdict{}, fmt.Errorf("POST %s: the answer%s %s", v.url, requestID(a.Meta.RequestID), why)
	}
	d := a.Data
	switch {
	case d == nil:
		return bad("has no data")
	case d.Valid == nil:
		return bad("has no data.valid")
	case d.Code == "":
		return bad("has no data.code")
	case *d.Valid != (d.Code == string(core.KeyValid)):
		return bad(fmt.Sprintf("says valid=%t with code %q", *d.Valid, d.Code))
	}
	out := core.KeyVerdict{Valid: *d.Valid, Code: core.KeyCode(d.Code), Name: d.Name}
	if out.Name == "" {
		out.Name = d.KeyID
	}
	if out.Code == "INSUFFICIENT_CREDITS" {
		// Newer Unkey versions name running out of credits so; it is
		// what USAGE_EXCEEDED meant before.
		out.Code = core.KeyUsageExceeded
	}
	if out.Code == core.KeyRateLimited || out.Code == core.KeyUsageExceeded {
		out.RetryAfter = v.retryAfter(d.Ratelimits)
	}
	return out, nil
}

// unixMillisFloor separates the two readings of a rate limit's reset: a
// Unix time in milliseconds is above it (it is in 2001), a duration in
// milliseconds (at most 30 days by Unkey's specification) far below.
const unixMillisFloor = 1_000_000_000_000

// retryAfter is how long until the last exceeded rate limit resets; 0 when
// the answer does not say.
func (v *Verifier) retryAfter(limits []ratelimit) time.Duration {
	var longest time.Duration
	for _, rl := range limits {
		if !rl.Exceeded || rl.Reset <= 0 {
			continue
		}
		var d time.Duration
		if rl.Reset >= unixMillisFloor {
			d = time.UnixMilli(rl.Reset).Sub(v.now())
			if d < time.Second {
				d = time.Second // the reset is due (or clocks differ): come back shortly
			}
		} else {
			d = time.Duration(rl.Reset) * time.Millisecond
		}
		longest = max(longest, d)
	}
	return longest
}

// problem summarises an error answer: Unkey's envelope when there is one.
func (v *Verifier) problem(status int, raw []byte) string {
	var e errorEnvelope
	if json.Unmarshal(raw, &e) == nil && e.Error != nil {
		msg := strings.TrimSpace(e.Error.Title)
		if e.Error.Detail != "" {
			msg += ": " + strings.TrimSpace(e.Error.Detail)
		}
		msg = ": " + truncate(msg, 300) + requestID(e.Meta.RequestID)
		switch status {
		case http.StatusUnauthorized:
			msg += " (Unkey does not know the root key: check SERVICE_UNKEY_ROOT_KEY)"
		case http.StatusForbidden:
			msg += " (the root key lacks the api.*.verify_key or api.<API_ID>.verify_key permission)"
		}
		return msg
	}
	if s := strings.TrimSpace(string(raw)); s != "" && utf8.ValidString(s) {
		return ": " + truncate(s, 200)
	}
	return ""
}

func requestID(id string) string {
	if id == "" {
		return ""
	}
	return " (request " + truncate(id, 64) + ")"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// cause says why a request failed: the caller gave up, or the timeout.
func (v *Verifier) cause(ctx, rctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v: %w", v.timeout, context.DeadlineExceeded)
	}
	return err
}

// redact removes the key and the root key from an error's message, keeping
// what it wraps for errors.Is.
func (v *Verifier) redact(err error, key string) error {
	msg := err.Error()
	clean := strings.ReplaceAll(msg, key, "[key]")
	clean = strings.ReplaceAll(clean, v.rootKey, "[root key]")
	return redacted{msg: clean, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }
