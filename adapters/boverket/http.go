package boverket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
)

// Defaults applied to a zero Config field.
const (
	DefaultVersion      = "latest"
	DefaultTimeout      = 60 * time.Second
	DefaultMaxBodyBytes = 64 << 20 // the real exports are ~1.2 MB; 64 MiB leaves room and bounds memory
)

// Config tells the sources where the publisher is. The product-sheet link is
// not configured here: the core derives it from Resource.CategoryCode.
type Config struct {
	// BaseURL of the JSON API, e.g. https://api.boverket.se/klimatdatabas.
	BaseURL string
	// Version is the release asked of the API: "latest" or e.g. "02.07.000".
	Version string
	// SubscriptionKey, when set, is sent as Ocp-Apim-Subscription-Key to the
	// JSON API only (never to the workbook host).
	SubscriptionKey string
	// Timeout bounds each request (connect, headers and body).
	Timeout time.Duration
	// ExcelURLSV and ExcelURLEN are the publisher's workbooks.
	ExcelURLSV, ExcelURLEN string
	// HTTPClient is used for every request; nil means a plain client (the
	// per-request Timeout still applies).
	HTTPClient *http.Client
	// MaxBodyBytes caps a response body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

func (c Config) version() string {
	if v := strings.TrimSpace(c.Version); v != "" {
		return v
	}
	return DefaultVersion
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c Config) maxBody() int64 {
	if c.MaxBodyBytes > 0 {
		return c.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// keyHeader carries the API subscription key.
const keyHeader = "Ocp-Apim-Subscription-Key"

// defaultClient keeps the subscription key from following a redirect to
// another host; net/http strips only its own sensitive headers.
var defaultClient = &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		req.Header.Del(keyHeader)
	}
	return nil
}}

func (c Config) client() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return defaultClient
}

// get fetches url and returns its body. Every failure names the URL and the
// cause: a status, a timeout, an oversized body.
func (c Config) get(ctx context.Context, url, accept, key string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	req.Header.Set("Accept", accept)
	if key != "" {
		req.Header.Set(keyHeader, key)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, c.cause(ctx, rctx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return nil, fmt.Errorf("GET %s: HTTP %s%s", url, resp.Status, quoteSnippet(snippet))
	}
	limit := c.maxBody()
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("GET %s: body of %d bytes exceeds the cap of %d bytes", url, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading body: %w", url, c.cause(ctx, rctx, err))
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("GET %s: body exceeds the cap of %d bytes", url, limit)
	}
	return body, nil
}

// cause names a request's own timeout as such; a cancellation by the caller
// is passed on unchanged.
func (c Config) cause(parent, rctx context.Context, err error) error {
	if parent.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s: %w", c.timeout(), context.DeadlineExceeded)
	}
	return err
}

func quoteSnippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" || !utf8.ValidString(s) {
		return ""
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "..."
	}
	return fmt.Sprintf(" (%q)", s)
}

// both runs fetch for the Swedish and the English culture in parallel. The
// first failure cancels the other request and is the one reported.
func both[T any](ctx context.Context, fetch func(ctx context.Context, culture string) (T, error)) (sv, en T, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	out := [2]T{}
	for i, culture := range []string{"sv", "en"} {
		wg.Go(func() {
			v, err := fetch(ctx, culture)
			if err != nil {
				once.Do(func() { firstErr = err; cancel() })
				return
			}
			out[i] = v
		})
	}
	wg.Wait()
	return out[0], out[1], firstErr
}

// unavailable wraps a source failure so the core reports it as a failed
// dependency and can fall back to the next source.
func unavailable(source string, err error) error {
	return core.Unavailablef(err, "%s: %v", source, err)
}
