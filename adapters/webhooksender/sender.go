// Package webhooksender delivers events over HTTP: one POST per attempt,
// signed per the Standard Webhooks specification for generic destinations,
// and refusing private, loopback and cloud metadata addresses both when a
// URL is saved and when a connection is made (DNS may change in between).
package webhooksender

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

const (
	defaultTimeout   = 10 * time.Second
	defaultUserAgent = "climatesearch-webhooks/1"
	// resolveTimeout bounds the DNS lookup of Check, which runs while a
	// person waits for the admin API to answer.
	resolveTimeout = 5 * time.Second
	// drainLimit is how much of an answer is read, after the excerpt kept
	// for the log (core.MaxResponseExcerpt), so the connection can be reused.
	drainLimit = 64 << 10
	// maxContentRunes is Discord's limit on a message's content.
	maxContentRunes = 2000
	// allowHint ends every refusal with the way to lift it.
	allowHint = "the service does not call loopback, private, link-local or cloud metadata addresses unless SERVICE_WEBHOOK_ALLOW_PRIVATE=true is set"
)

// Config tunes the sender.
type Config struct {
	// Timeout bounds one attempt, connection to last byte; default 10s.
	Timeout time.Duration
	// AllowPrivate lets deliveries reach loopback, private, link-local and
	// metadata addresses (SERVICE_WEBHOOK_ALLOW_PRIVATE), e.g. for tests or
	// receivers on the same network.
	AllowPrivate bool
	// UserAgent defaults to "climatesearch-webhooks/1".
	UserAgent string
}

// Sender implements ports.WebhookSender.
type Sender struct {
	cfg    Config
	client *http.Client
}

var _ ports.WebhookSender = (*Sender)(nil)

// New returns a sender with its own connection pool.
func New(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = defaultUserAgent
	}
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		// Control sees the address actually dialed, after DNS, so a name
		// that passed Check but now resolves inside the network is refused.
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &refusedError{msg: fmt.Sprintf("refused to connect to %s: not an IP address", address)}
			}
			if class := blockedClass(ap.Addr()); class != "" {
				return &refusedError{msg: fmt.Sprintf("refused to connect to %s (%s); %s", ap.Addr().Unmap(), class, allowHint)}
			}
			return nil
		}
	}
	transport := &http.Transport{
		Proxy:                  nil, // never the environment's proxy: it would dial for us, unchecked
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Sender{cfg: cfg, client: &http.Client{
		Transport: transport,
		// A redirect could lead anywhere; the 3xx is the answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Check refuses URLs the sender will not call.
func (s *Sender) Check(ctx context.Context, rawURL string) error {
	u, err := parseURL(rawURL)
	if err != nil || s.cfg.AllowPrivate {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if class := blockedClass(ip); class != "" {
			return core.Invalidf("the webhook URL points at %s (%s); %s", host, class, allowHint)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			err = errors.New(dnsErr.Err)
		}
		return core.Invalidf("cannot resolve host %q of the webhook URL: %v", host, err)
	}
	if len(ips) == 0 {
		return core.Invalidf("cannot resolve host %q of the webhook URL: no addresses", host)
	}
	// Every address counts: the dialer may pick any of them.
	for _, ip := range ips {
		if class := blockedClass(ip); class != "" {
			return core.Invalidf("the webhook host %q resolves to %s (%s); %s", host, ip.Unmap(), class, allowHint)
		}
	}
	return nil
}

// parseURL makes the checks that need no network.
func parseURL(rawURL string) (*url.URL, error) {
	if len(rawURL) > core.MaxWebhookURL {
		return nil, core.Invalidf("the webhook URL is %d characters long; the limit is %d", len(rawURL), core.MaxWebhookURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // the URL itself is already in our message
		}
		return nil, core.Invalidf("the webhook URL %q cannot be parsed: %v", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, core.Invalidf("the webhook URL %q must start with https:// or http://", rawURL)
	}
	if u.Hostname() == "" {
		return nil, core.Invalidf("the webhook URL %q has no host", rawURL)
	}
	return u, nil
}

// metadata are the cloud instance metadata endpoints (AWS, GCP and Azure
// share 169.254.169.254; AWS over IPv6; Alibaba Cloud).
var metadata = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true,
	netip.MustParseAddr("fd00:ec2::254"):   true,
	netip.MustParseAddr("100.100.100.200"): true,
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	broadcast = netip.MustParseAddr("255.255.255.255")
	// reserved ranges no public receiver lives in: IETF protocol
	// assignments, documentation, benchmarking, and the old class E.
	reserved = []netip.Prefix{
		netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("240.0.0.0/4"),
		netip.MustParsePrefix("2001:db8::/32"),
	}
	// IPv6 forms that carry an IPv4 address a gateway will connect to:
	// NAT64 (the last 32 bits) and 6to4 (bits 16-48).
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address a NAT64 or 6to4 address leads to.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// blockedClass names the class of an address deliveries must not reach, or
// returns "" for an address that is fine.
func blockedClass(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("") // ::ffff:10.0.0.1 is 10.0.0.1 on the wire
	switch {
	case !ip.IsValid():
		return "not a valid address"
	case metadata[ip]: // before private and CGNAT, which contain some of them
		return "cloud metadata"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast():
		return "multicast"
	case cgnat.Contains(ip):
		return "carrier-grade NAT"
	case thisNet.Contains(ip):
		return `"this network" 0.0.0.0/8`
	case ip == broadcast:
		return "broadcast"
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return "reserved " + p.String()
		}
	}
	if v4, ok := embeddedIPv4(ip); ok {
		if class := blockedClass(v4); class != "" {
			return class + " via " + v4.String()
		}
	}
	return ""
}

// Send makes one delivery attempt.
func (s *Sender) Send(ctx context.Context, d core.Destination, ev core.Event) core.SendResult {
	start := time.Now()
	attempt, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := s.request(attempt, d, ev)
	if err != nil {
		// A bad URL, kind or secret: only an edit of the destination helps.
		return core.SendResult{Err: err, Refused: true}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		res := s.failure(ctx, attempt, err)
		res.Duration = time.Since(start)
		return res
	}
	// The body is read under the attempt's timeout: a receiver that stalls
	// mid-answer costs the timeout at most, and its answer is kept as far
	// as it came.
	head, _ := io.ReadAll(io.LimitReader(resp.Body, core.MaxResponseExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	_ = resp.Body.Close()
	return core.SendResult{
		Code:       resp.StatusCode,
		Body:       excerpt(head),
		RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()),
		Duration:   time.Since(start),
	}
}

// request builds the POST for the destination's kind, signed when generic.
func (s *Sender) request(ctx context.Context, d core.Destination, ev core.Event) (*http.Request, error) {
	if _, err := parseURL(d.URL); err != nil {
		return nil, err
	}
	var body []byte
	var err error
	signed := false
	switch d.Kind {
	case core.WebhookGeneric, "":
		body, err = json.Marshal(ev)
		signed = true
	case core.WebhookText:
		body, err = json.Marshal(map[string]string{"text": ev.Summary()})
	case core.WebhookContent:
		body, err = json.Marshal(map[string]string{"content": truncate(ev.Summary(), maxContentRunes)})
	default:
		return nil, core.Invalidf("unknown webhook kind %q: use generic, text or content", d.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding the %s event: %w", ev.Type, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return nil, core.Invalidf("the webhook URL cannot be used: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.cfg.UserAgent)
	req.Header.Set("webhook-id", ev.ID)
	if signed {
		key, err := core.ParseSecret(d.Secret)
		if err != nil {
			return nil, &sendError{msg: "cannot sign the delivery: " + err.Error(), err: err}
		}
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		sig := sign(key, ev.ID, ts, body)
		req.Header.Set("webhook-timestamp", ts)
		req.Header.Set("webhook-signature", sig)
		req.Header.Set("X-Service-Signature", sig)
	}
	return req, nil
}

// sign computes a Standard Webhooks v1 signature: HMAC-SHA256 over
// "id.timestamp.body", base64.
func sign(key []byte, id, ts string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// truncate cuts s to at most n runes, the last one an ellipsis.
// excerpt makes the start of an answer body safe to store and show: valid
// UTF-8 (a character cut at the end and invalid bytes dropped), without
// control characters other than newline and tab. It never grows b.
func excerpt(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if !(r == utf8.RuneError && size == 1) && (r == '\n' || r == '\t' || !unicode.IsControl(r)) {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// failure turns a failed attempt into a short message for the delivery
// log; parent is the caller's context, attempt the one with our timeout.
func (s *Sender) failure(parent, attempt context.Context, err error) core.SendResult {
	var refused *refusedError
	var dnsErr *net.DNSError
	var ue *url.Error
	msg := ""
	switch {
	case errors.As(err, &refused):
		return core.SendResult{Err: refused, Refused: true}
	case parent.Err() != nil:
		msg = "canceled before the receiver answered"
	case attempt.Err() != nil:
		msg = fmt.Sprintf("timed out after %s", s.cfg.Timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		msg = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		msg = "connection reset by the receiver"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the receiver closed the connection without answering"
	case errors.As(err, &dnsErr):
		msg = fmt.Sprintf("cannot resolve host %q: %s", dnsErr.Name, dnsErr.Err)
	case errors.As(err, &ue):
		msg = ue.Err.Error() // without "Post <url>:": chat webhook URLs hold tokens
	default:
		msg = err.Error()
	}
	return core.SendResult{Err: &sendError{msg: msg, err: err}}
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		const maxSeconds = math.MaxInt64 / int64(time.Second)
		return time.Duration(min(max(n, 0), maxSeconds)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// sendError is a short message for the delivery log that keeps its cause
// for errors.Is.
type sendError struct {
	msg string
	err error
}

func (e *sendError) Error() string { return e.msg }
func (e *sendError) Unwrap() error { return e.err }

// refusedError is a connection the dialer refused to make.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }
