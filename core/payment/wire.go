package payment

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The wire format, as the reference client mppx 0.11.0 writes and reads it
// (node_modules/mppx/dist/Challenge.js, Credential.js, Receipt.js,
// PaymentRequest.js).

// challenge is one Payment challenge: the auth-params of WWW-Authenticate,
// and the `challenge` member a credential echoes.
type challenge struct {
	ID          string
	Realm       string
	Method      string
	Intent      string
	Request     string // base64url (no padding) of the canonical request JSON
	Description string
	Digest      string
	Expires     string
	Header      string // a credential header other than Authorization; never issued here
	Opaque      string
}

// computeID is the challenge id: base64url(HMAC-SHA256(secret, input)), the
// input being realm|method|intent|request|expires|digest|opaque with absent
// slots empty; a non-default credential header takes a slot before opaque
// (mppx Challenge.js, idBindingInput and computeId).
func computeID(secret []byte, c challenge) string {
	slots := []string{c.Realm, c.Method, c.Intent, c.Request, c.Expires, c.Digest}
	if c.Header != "" && !strings.EqualFold(c.Header, "Authorization") {
		slots = append(slots, c.Header)
	}
	slots = append(slots, c.Opaque)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(strings.Join(slots, "|")))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// headerValue is the WWW-Authenticate value of c, its parameters in the
// order mppx's Challenge.serialize writes them, every value quoted.
func headerValue(c challenge) string {
	var b strings.Builder
	b.WriteString("Payment ")
	param := func(name, value string) {
		if b.Len() > len("Payment ") {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(quote(value))
		b.WriteByte('"')
	}
	param("id", c.ID)
	param("realm", c.Realm)
	param("method", c.Method)
	param("intent", c.Intent)
	param("request", c.Request)
	if c.Description != "" {
		param("description", c.Description)
	}
	if c.Digest != "" {
		param("digest", c.Digest)
	}
	if c.Expires != "" {
		param("expires", c.Expires)
	}
	if c.Header != "" {
		param("header", c.Header)
	}
	if c.Opaque != "" {
		param("opaque", c.Opaque)
	}
	return b.String()
}

// quote escapes a quoted-string value as mppx's authParam does: backslash
// and double quote get a backslash, characters a header cannot carry
// become \uXXXX (UTF-16 code units), which mppx's parser turns back into
// the character. mppx only needs this above U+00FF, but a Go header is
// bytes, so everything outside printable ASCII is escaped. Control
// characters (CR, LF included) are dropped: they are never valid in a
// header.
func quote(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			// drop
		case r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := surrogates(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// object is c as a JSON object with `request` decoded, the form MCP
// carries in error.data.challenges (mppx Challenge.Schema).
func object(c challenge, request map[string]any) json.RawMessage {
	m := map[string]any{
		"id": c.ID, "realm": c.Realm, "method": c.Method, "intent": c.Intent, "request": request,
	}
	for k, v := range map[string]string{"description": c.Description, "digest": c.Digest, "expires": c.Expires, "opaque": c.Opaque} {
		if v != "" {
			m[k] = v
		}
	}
	out, err := canonical(m)
	if err != nil {
		panic(err) // only strings and the request this package built
	}
	return out
}

// credential is a parsed `Authorization: Payment …` value.
type credential struct {
	Challenge challenge
	Source    string
	Payload   json.RawMessage
}

// errMalformed marks a credential that cannot be read.
var errMalformed = errors.New("malformed credential")

const (
	maxAuthorization = 64 << 10
	maxRequestParam  = 16 << 10 // mppx refuses longer request parameters
)

var paymentScheme = regexp.MustCompile(`(?i)^Payment\s+(\S+)$`)

// parseCredential reads an Authorization value, `Payment <base64url JSON>`
// (mppx Credential.serialize), or a credential given as a JSON object, the
// form MCP carries in params._meta["org.paymentauth/credential"] (there the
// challenge's request is an object, not a string).
func parseCredential(authorization string) (credential, error) {
	authorization = strings.TrimSpace(authorization)
	if len(authorization) > maxAuthorization {
		return credential{}, fmt.Errorf("%w: longer than %d bytes", errMalformed, maxAuthorization)
	}
	var raw []byte
	if strings.HasPrefix(authorization, "{") {
		raw = []byte(authorization)
	} else {
		token := ""
		// Like mppx's extractPaymentScheme: the Payment scheme among
		// comma-separated schemes (base64url has no comma).
		for part := range strings.SplitSeq(authorization, ",") {
			if m := paymentScheme.FindStringSubmatch(strings.TrimSpace(part)); m != nil {
				token = m[1]
				break
			}
		}
		if token == "" {
			return credential{}, fmt.Errorf("%w: not a Payment credential", errMalformed)
		}
		var err error
		if raw, err = decodeBase64(token); err != nil {
			return credential{}, fmt.Errorf("%w: credential is not base64url", errMalformed)
		}
	}
	var w struct {
		Challenge map[string]json.RawMessage `json:"challenge"`
		Source    json.RawMessage            `json:"source"`
		Payload   json.RawMessage            `json:"payload"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&w); err != nil {
		return credential{}, fmt.Errorf("%w: credential is not a JSON object", errMalformed)
	}
	if w.Challenge == nil {
		return credential{}, fmt.Errorf("%w: no challenge", errMalformed)
	}
	if len(w.Payload) == 0 || string(w.Payload) == "null" {
		return credential{}, fmt.Errorf("%w: no payload", errMalformed)
	}
	var c credential
	c.Payload = w.Payload
	if len(w.Source) > 0 && string(w.Source) != "null" {
		if err := json.Unmarshal(w.Source, &c.Source); err != nil {
			return credential{}, fmt.Errorf("%w: source is not a string", errMalformed)
		}
	}
	str := func(name string, required bool) (string, error) {
		v, ok := w.Challenge[name]
		if !ok || string(v) == "null" {
			if required {
				return "", fmt.Errorf("%w: challenge has no %s", errMalformed, name)
			}
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("%w: challenge %s is not a string", errMalformed, name)
		}
		if required && s == "" {
			return "", fmt.Errorf("%w: challenge has an empty %s", errMalformed, name)
		}
		return s, nil
	}
	ch := &c.Challenge
	var err error
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{
		{"id", &ch.ID, true}, {"realm", &ch.Realm, true}, {"method", &ch.Method, true},
		{"intent", &ch.Intent, true}, {"expires", &ch.Expires, false}, {"digest", &ch.Digest, false},
		{"description", &ch.Description, false}, {"header", &ch.Header, false},
	} {
		if *f.dst, err = str(f.name, f.required); err != nil {
			return credential{}, err
		}
	}
	// request: a base64url string (HTTP) or the object itself (MCP); either
	// way it is canonicalised again, as mppx does before verifying the id.
	req, ok := w.Challenge["request"]
	if !ok {
		return credential{}, fmt.Errorf("%w: challenge has no request", errMalformed)
	}
	if ch.Request, err = canonicalParam(req, true); err != nil {
		return credential{}, fmt.Errorf("%w: challenge request: %v", errMalformed, err)
	}
	// opaque: a base64url string, or (older mppx) the object it encodes.
	if op, ok := w.Challenge["opaque"]; ok && string(op) != "null" {
		if ch.Opaque, err = canonicalParam(op, false); err != nil {
			return credential{}, fmt.Errorf("%w: challenge opaque: %v", errMalformed, err)
		}
	}
	return c, nil
}

// canonicalParam turns a request (or opaque) member into the base64url
// string of its canonical JSON. A string member is decoded and, when
// recanonicalise is set, canonicalised again (mppx deserialises and
// re-serialises `request`; it keeps `opaque` strings as they are).
func canonicalParam(v json.RawMessage, recanonicalise bool) (string, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		if len(s) > maxRequestParam {
			return "", errors.New("too large")
		}
		if !recanonicalise {
			return s, nil
		}
		raw, err := decodeBase64(s)
		if err != nil {
			return "", errors.New("not base64url")
		}
		v = raw
	}
	obj, err := parseJSON(v)
	if err != nil {
		return "", errors.New("not JSON")
	}
	if _, ok := obj.(map[string]any); !ok {
		return "", errors.New("not a JSON object")
	}
	out, err := canonical(obj)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// decodeBase64 reads base64url, padded or not (standard base64 too, which
// ox's decoder also accepts).
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}
