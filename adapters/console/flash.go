package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// A flash carries the outcome of a POST to the page the browser is sent to
// next (post/redirect/get): an ingest result, a new secret, a test answer.
//
// Flashes live in the store (ports.KV, like sessions) for flashTTL, so the
// page may be served by another replica than the one that took the POST.
// The redirect carries a random flash id; the store key is the SHA-256 of
// the client's session id and that flash id, so the id alone (in a log, a
// browser history, a shared screen) shows the flash to no other client,
// and a leaked store row names neither. Without an admin token there are
// no sessions and the flash id alone is the key, in a console open to all.
//
// A flash is read again on a reload, except one that holds a secret: that
// one is taken (read and deleted in one step, ports.KV.TakeKV), so it is
// shown once however many replicas are asked at once.
const (
	flashTTL    = 10 * time.Minute
	flashPrefix = "flash/"
	flashIDLen  = 32 // hex digits: 128 random bits
)

type flash struct {
	Notice string
	Error  string
	// Secret is shown once.
	Secret string
	Data   any
}

// storedFlash is a flash as the store keeps it: its data as JSON with the
// name of its type, and its expiry by the console's clock.
type storedFlash struct {
	Notice  string          `json:"notice,omitempty"`
	Error   string          `json:"error,omitempty"`
	Secret  string          `json:"secret,omitempty"`
	Kind    string          `json:"kind,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Expires time.Time       `json:"expires"`
}

// The kinds of data a flash carries.
const (
	kindIngestResult    = "ingest_result"
	kindIngestOutcome   = "ingest_outcome"
	kindDeliveryAttempt = "delivery_attempt"
)

func flashKind(v any) (string, bool) {
	switch v.(type) {
	case nil:
		return "", true
	case core.IngestResult:
		return kindIngestResult, true
	case ingestOutcome:
		return kindIngestOutcome, true
	case core.DeliveryAttempt:
		return kindDeliveryAttempt, true
	}
	return "", false
}

func decodeFlashData(kind string, raw json.RawMessage) (any, error) {
	var err error
	switch kind {
	case "":
		return nil, nil
	case kindIngestResult:
		var v core.IngestResult
		err = json.Unmarshal(raw, &v)
		return v, err
	case kindIngestOutcome:
		var v ingestOutcome
		err = json.Unmarshal(raw, &v)
		return v, err
	case kindDeliveryAttempt:
		var v core.DeliveryAttempt
		err = json.Unmarshal(raw, &v)
		return v, err
	}
	return nil, fmt.Errorf("unknown flash data %q", kind)
}

type flashes struct {
	kv  ports.KV
	now func() time.Time
}

// newFlashes keeps flashes in kv; in memory when kv is nil (tests).
func newFlashes(kv ports.KV, now func() time.Time) *flashes {
	if kv == nil {
		kv = &memKV{now: now, m: map[string]memValue{}}
	}
	return &flashes{kv: kv, now: now}
}

// flashKey is where a flash is kept: the hash of the session id of the
// client it is for ("" without a session) and of the flash id.
func flashKey(session, id string) string {
	sum := sha256.Sum256([]byte(session + "\x00" + id))
	return flashPrefix + hex.EncodeToString(sum[:])
}

// flashIDWellFormed tells whether id can be a flash id, so a made-up one
// costs no store read.
func flashIDWellFormed(id string) bool {
	if len(id) != flashIDLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// put stores fl for the client of session and returns its id.
func (f *flashes) put(ctx context.Context, session string, fl flash) (string, error) {
	kind, ok := flashKind(fl.Data)
	if !ok {
		return "", fmt.Errorf("console: a flash cannot carry a %T", fl.Data)
	}
	s := storedFlash{Notice: fl.Notice, Error: fl.Error, Secret: fl.Secret, Kind: kind, Expires: f.now().Add(flashTTL).UTC()}
	if fl.Data != nil {
		raw, err := json.Marshal(fl.Data)
		if err != nil {
			return "", fmt.Errorf("console: flash data: %w", err)
		}
		s.Data = raw
	}
	v, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("console: flash: %w", err)
	}
	id := randomID()[:flashIDLen]
	if err := f.kv.PutTTL(ctx, flashKey(session, id), v, flashTTL); err != nil {
		return "", err
	}
	return id, nil
}

// get returns the flash id of the client of session, when its data is nil
// or of the kind want (a flash id carried to another page never meets a
// template that cannot show it). A flash with a secret is taken: of every
// read, on any replica, one only returns it; a reader that cannot show a
// secret (secrets false) leaves it for one that can.
func (f *flashes) get(ctx context.Context, session, id, want string, secrets bool) (flash, bool, error) {
	if !flashIDWellFormed(id) {
		return flash{}, false, nil
	}
	key := flashKey(session, id)
	v, ok, err := f.kv.GetKV(ctx, key)
	if err != nil || !ok {
		return flash{}, false, err
	}
	s, ok := f.decode(v, want)
	if !ok {
		return flash{}, false, nil
	}
	if s.Secret != "" {
		if !secrets {
			return flash{}, false, nil
		}
		v, ok, err = f.kv.TakeKV(ctx, key)
		if err != nil || !ok {
			return flash{}, false, err
		}
		if s, ok = f.decode(v, want); !ok {
			return flash{}, false, nil
		}
	}
	data, err := decodeFlashData(s.Kind, s.Data)
	if err != nil {
		return flash{}, false, nil
	}
	return flash{Notice: s.Notice, Error: s.Error, Secret: s.Secret, Data: data}, true, nil
}

// decode reads a stored flash; false when it is unreadable, expired by the
// console's clock, or of another kind than want.
func (f *flashes) decode(v []byte, want string) (storedFlash, bool) {
	var s storedFlash
	if err := json.Unmarshal(v, &s); err != nil || !f.now().Before(s.Expires) {
		return storedFlash{}, false
	}
	return s, s.Kind == "" || s.Kind == want
}

// getFor returns the flash when its Data is nil or a T (and, unless
// secrets, it holds no secret).
func getFor[T any](ctx context.Context, f *flashes, session, id string, secrets bool) (*flash, bool, error) {
	var zero T
	want, _ := flashKind(zero)
	fl, ok, err := f.get(ctx, session, id, want, secrets)
	if err != nil || !ok {
		return nil, false, err
	}
	return &fl, true, nil
}

// flashSession is what ties a flash to its client: the id of the session
// cookie the request carries, "" without a well-formed one.
func flashSession(r *http.Request) string {
	if ck, err := r.Cookie(sessionCookie); err == nil && wellFormed(ck.Value) {
		return ck.Value
	}
	return ""
}

// readFlash returns the flash named by the request's query parameter param
// when its data is nil or a T; one with a secret only when the page shows
// secrets (so a flash id pasted onto another page does not use it up). When the store cannot be read, the page
// says so in the flash's place: the flash is still there (nothing was
// taken) and a reload shows it once the store answers.
func readFlash[T any](c *Console, g *gin.Context, param string, secrets bool) (*flash, bool) {
	id := g.Query(param)
	if id == "" {
		return nil, false
	}
	fl, ok, err := getFor[T](g.Request.Context(), c.flashes, flashSession(g.Request), id, secrets)
	if err != nil {
		_, msg := statusOf(err)
		c.d.Log.Warn("console flash not read", zap.String("request_id", core.RequestID(g.Request.Context())), zap.Error(err))
		return &flash{Error: "The outcome of the last action could not be read (" + msg + "). Reload this page to see it once the store answers; it is kept for " +
			flashTTL.String() + "."}, true
	}
	return fl, ok
}

// outcomePage shows a POST's outcome when the store could not keep it for
// the page the browser was to be sent to.
type outcomePage struct {
	layout
	Flash   *flash
	Message string
	Next    string
	Attempt *core.DeliveryAttempt
	Result  *core.IngestResult
	Outcome *ingestOutcome
}

// redirectFlash stores fl and sends the browser to path with q and the
// flash's id as param (post/redirect/get). When the store cannot keep the
// flash, the outcome is not dropped: this answer shows it, with 503 and a
// link to path, since the page there will not.
func (c *Console) redirectFlash(g *gin.Context, path string, q url.Values, param string, fl flash) {
	if q == nil {
		q = url.Values{}
	}
	id, err := c.flashes.put(g.Request.Context(), flashSession(g.Request), fl)
	if err == nil {
		q.Set(param, id)
		redirect(g, path+"?"+q.Encode())
		return
	}
	status, msg := statusOf(err)
	if status < 500 {
		status = http.StatusInternalServerError
	}
	c.d.Log.Error("console flash not stored", zap.String("request_id", core.RequestID(g.Request.Context())), zap.Error(err))
	next := path
	if len(q) > 0 {
		next += "?" + q.Encode()
	}
	p := outcomePage{layout: c.layout(g, "Outcome", ""), Flash: &fl, Next: next,
		Message: "The store could not keep this outcome for the next page (" + msg + "), so it is shown here, and only here."}
	switch d := fl.Data.(type) {
	case core.DeliveryAttempt:
		p.Attempt = &d
	case core.IngestResult:
		p.Result = &d
	case ingestOutcome:
		p.Outcome = &d
		p.Result = d.Result
	}
	c.render(g, status, "outcome", p)
	g.Abort()
}
