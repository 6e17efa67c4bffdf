package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// flashKV is a store shared by consoles (replicas) whose flash reads or
// writes fail when told to; sessions keep working.
type flashKV struct {
	memKV
	putDown, readDown atomic.Bool
}

func isFlash(key string) bool { return strings.HasPrefix(key, flashPrefix) }

func (k *flashKV) PutTTL(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if isFlash(key) && k.putDown.Load() {
		return errDown
	}
	return k.memKV.PutTTL(ctx, key, v, ttl)
}

func (k *flashKV) GetKV(ctx context.Context, key string) ([]byte, bool, error) {
	if isFlash(key) && k.readDown.Load() {
		return nil, false, errDown
	}
	return k.memKV.GetKV(ctx, key)
}

func (k *flashKV) TakeKV(ctx context.Context, key string) ([]byte, bool, error) {
	if isFlash(key) && k.readDown.Load() {
		return nil, false, errDown
	}
	return k.memKV.TakeKV(ctx, key)
}

// hooks is a Webhooks whose every rotation gives a new secret.
type hooks struct {
	ports.Webhooks
	rotations atomic.Int64
}

func (h *hooks) List(context.Context) ([]core.Destination, error) { return nil, nil }

func (h *hooks) Get(_ context.Context, id string) (core.Destination, error) {
	return core.Destination{ID: id, URL: "https://receiver.example/hook", Secret: "whsec_abcd…", Enabled: true}, nil
}

func (h *hooks) Create(_ context.Context, in core.DestinationInput) (core.Destination, error) {
	return core.Destination{ID: "wh_new", URL: *in.URL, Secret: "whsec_createdcreatedcreatedcreatedcr", Enabled: true}, nil
}

func (h *hooks) Update(_ context.Context, id string, in core.DestinationInput) (core.Destination, error) {
	d, _ := h.Get(context.Background(), id)
	if in.RotateSecret {
		d.Secret = fmt.Sprintf("whsec_rotated%024d", h.rotations.Add(1))
	}
	return d, nil
}

func (h *hooks) Test(context.Context, string) (core.DeliveryAttempt, error) {
	return core.DeliveryAttempt{At: time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC), EventType: "webhook.test", Attempt: 1,
		Status: core.DeliveryDelivered, ResponseCode: 204, DurationMS: 12.5, Response: "thanks"}, nil
}

func (h *hooks) Deliveries(_ context.Context, id string, _ int) (core.DeliveryLog, error) {
	return core.DeliveryLog{DestinationID: id}, nil
}

// flashConsoles are two consoles (two replicas) over one store.
func flashConsoles(t *testing.T, token string) (*flashKV, http.Handler, http.Handler) {
	t.Helper()
	gin.SetMode(gin.TestMode)
	kv := &flashKV{memKV: memKV{now: time.Now, m: map[string]memValue{}}}
	h := &hooks{}
	var out []http.Handler
	for range 2 {
		c, err := New(Deps{AdminToken: token, Sessions: kv, Status: noCatalogs{}, Webhooks: h})
		if err != nil {
			t.Fatal(err)
		}
		e := gin.New()
		c.Mount(e)
		out = append(out, e)
	}
	return kv, out[0], out[1]
}

type page struct {
	status   int
	location string
	body     string
}

func open(h http.Handler, method, path string, form url.Values, ck *http.Cookie) page {
	res := serve(h, method, path, form, ck)
	b, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, location: res.Header.Get("Location"), body: string(b)}
}

func signIn(t *testing.T, h http.Handler) *http.Cookie {
	t.Helper()
	ck := sessionCookieOf(serve(h, http.MethodPost, "/signin", url.Values{"token": {"tok"}}, nil))
	if ck == nil {
		t.Fatal("no session cookie")
	}
	return ck
}

// rotate posts the rotation form on h and returns where it redirects.
func rotate(t *testing.T, h http.Handler, ck *http.Cookie) string {
	t.Helper()
	p := open(h, http.MethodPost, "/webhooks/wh_1/rotate", url.Values{}, ck)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/webhooks/wh_1?flash=") {
		t.Fatalf("rotate: %d to %q: %.300s", p.status, p.location, p.body)
	}
	return p.location
}

const rotatedSecret = "whsec_rotated000000000000000000000001"

// A flash written by one console is shown by another over the same store
// (the redirected GET served by another replica); one with a secret is
// shown once, on whichever console asks first, and only to the client
// that made it: its id in the URL shows nothing to another session, and
// such a try does not use it up.
func TestFlashSecretShownOnceByAnotherConsole(t *testing.T) {
	_, a, b := flashConsoles(t, "tok")
	ck := signIn(t, a)
	loc := rotate(t, a, ck)

	// The flash id on a page that shows no secret shows nothing and
	// leaves the secret for its page.
	flashID := loc[strings.Index(loc, "=")+1:]
	for _, path := range []string{"/webhooks?flash=" + flashID} {
		if p := open(b, http.MethodGet, path, nil, ck); p.status != http.StatusOK || strings.Contains(p.body, rotatedSecret) || strings.Contains(p.body, "Secret rotated") {
			t.Fatalf("%s: %d: %.300s", path, p.status, p.body)
		}
	}
	other := signIn(t, b)
	if p := open(b, http.MethodGet, loc, nil, other); p.status != http.StatusOK || strings.Contains(p.body, rotatedSecret) || strings.Contains(p.body, "Secret rotated") {
		t.Fatalf("another session opening the flash's URL: %d: %.300s", p.status, p.body)
	}
	if p := open(b, http.MethodGet, loc, nil, nil); p.status != http.StatusSeeOther || strings.Contains(p.body, rotatedSecret) {
		t.Fatalf("no session opening the flash's URL: %d", p.status)
	}
	p := open(b, http.MethodGet, loc, nil, ck)
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="secret">`+rotatedSecret+"<") || !strings.Contains(p.body, "Secret rotated") {
		t.Fatalf("B does not show the secret rotated on A: %d: %.500s", p.status, p.body)
	}
	for _, h := range []http.Handler{a, b} {
		if p := open(h, http.MethodGet, loc, nil, ck); p.status != http.StatusOK || strings.Contains(p.body, rotatedSecret) || strings.Contains(p.body, `id="secret"`) {
			t.Fatalf("the secret is shown again: %d", p.status)
		}
	}
}

// A flash without a secret is shown again on a reload, by either console.
func TestPlainFlashShownAgainByAnotherConsole(t *testing.T) {
	_, a, b := flashConsoles(t, "tok")
	ck := signIn(t, a)
	p := open(a, http.MethodPost, "/webhooks/wh_1/test", url.Values{}, ck)
	if p.status != http.StatusSeeOther {
		t.Fatalf("test: %d", p.status)
	}
	for i, h := range []http.Handler{b, a, b} {
		q := open(h, http.MethodGet, p.location, nil, ck)
		if q.status != http.StatusOK || !strings.Contains(q.body, "Test delivered.") || !strings.Contains(q.body, `id="test-code">HTTP 204<`) ||
			!strings.Contains(q.body, "thanks") {
			t.Fatalf("read %d: %d: %.500s", i, q.status, q.body)
		}
	}
}

// Many reads of one secret flash at once, on two consoles: one shows it.
func TestFlashSecretRace(t *testing.T) {
	_, a, b := flashConsoles(t, "tok")
	ck := signIn(t, a)
	loc := rotate(t, a, ck)
	var shown atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 16 {
		h := []http.Handler{a, b}[i%2]
		wg.Go(func() {
			<-start
			p := open(h, http.MethodGet, loc, nil, ck)
			if p.status != http.StatusOK {
				t.Errorf("read: %d", p.status)
			}
			if strings.Contains(p.body, rotatedSecret) {
				shown.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := shown.Load(); n != 1 {
		t.Fatalf("the secret was shown %d times", n)
	}
}

// When the store cannot keep a flash, the POST's answer shows the outcome
// itself (503, the secret, a link on); when it cannot read one, the page
// says so, and the flash, left in place, is shown once the store answers.
func TestFlashWhenTheStoreIsDown(t *testing.T) {
	kv, a, b := flashConsoles(t, "tok")
	ck := signIn(t, a)

	kv.putDown.Store(true)
	p := open(a, http.MethodPost, "/webhooks/wh_1/rotate", url.Values{}, ck)
	if p.status != http.StatusServiceUnavailable || p.location != "" || !strings.Contains(p.body, `id="secret">`+rotatedSecret+"<") ||
		!strings.Contains(p.body, "could not keep this outcome") || !strings.Contains(p.body, `href="/webhooks/wh_1"`) {
		t.Fatalf("rotate with the store down: %d to %q: %.800s", p.status, p.location, p.body)
	}
	kv.putDown.Store(false)

	loc := rotate(t, a, ck)
	const second = "whsec_rotated000000000000000000000002"
	kv.readDown.Store(true)
	p = open(b, http.MethodGet, loc, nil, ck)
	if p.status != http.StatusOK || strings.Contains(p.body, second) || !strings.Contains(p.body, "could not be read") {
		t.Fatalf("a flash read with the store down: %d: %.800s", p.status, p.body)
	}
	kv.readDown.Store(false)
	if p := open(b, http.MethodGet, loc, nil, ck); !strings.Contains(p.body, second) {
		t.Fatalf("the flash is lost after the store came back: %d", p.status)
	}
	if p := open(a, http.MethodGet, loc, nil, ck); strings.Contains(p.body, second) {
		t.Fatal("the secret is shown twice")
	}
}

// Without an admin token there are no sessions: the flash id alone finds
// the flash, and a secret is still shown once.
func TestFlashWithoutAdminToken(t *testing.T) {
	_, a, b := flashConsoles(t, "")
	p := open(a, http.MethodPost, "/webhooks", url.Values{"url": {"https://receiver.example/new"}}, nil)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/webhooks/wh_new?flash=") {
		t.Fatalf("create: %d to %q", p.status, p.location)
	}
	const secret = "whsec_createdcreatedcreatedcreatedcr"
	if q := open(b, http.MethodGet, p.location, nil, nil); !strings.Contains(q.body, secret) || !strings.Contains(q.body, "Destination added.") {
		t.Fatalf("B: %d: %.500s", q.status, q.body)
	}
	if q := open(a, http.MethodGet, p.location, nil, nil); strings.Contains(q.body, secret) {
		t.Fatal("the secret is shown twice")
	}
}

// The store keeps neither the flash id nor the session id, and a flash's
// data comes back as it was put, whatever console reads it.
func TestFlashStoredUnderHashesWithItsData(t *testing.T) {
	ctx := context.Background()
	kv := &memKV{now: time.Now, m: map[string]memValue{}}
	f1, f2 := newFlashes(kv, time.Now), newFlashes(kv, time.Now)
	session := randomID()
	at := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	res := core.IngestResult{Catalog: core.DKBR, Origin: "file", Version: "BR25", Seen: 3, Upserted: 2, Unchanged: 1, Changed: []string{"dkbr:1"},
		StartedAt: at, FinishedAt: at.Add(time.Second), DryRun: true, Changes: []core.ResourceChange{{Ref: "dkbr:1", New: true}}}
	for _, data := range []any{
		res,
		ingestOutcome{Catalog: core.DKBR, Version: "BR25", Mapping: map[string]string{"id": "ID"}, Result: &res,
			Problems: []core.FileProblem{{Row: 3, Column: "A1-A3", Msg: "not a number"}}, Status: 400},
		core.DeliveryAttempt{At: at, EventID: "ev_1", EventType: "webhook.test", Attempt: 1, Status: core.DeliveryDelivered, DurationMS: 1.5, ResponseCode: 204, Response: "ok"},
	} {
		id, err := f1.put(ctx, session, flash{Notice: "n", Error: "e", Data: data})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := flashKind(data)
		got, ok, err := f2.get(ctx, session, id, want, true)
		if err != nil || !ok || !reflect.DeepEqual(got.Data, data) || got.Notice != "n" || got.Error != "e" {
			t.Fatalf("%T: got %+v, %v, %v", data, got, ok, err)
		}
		if _, ok, _ := f2.get(ctx, "", id, want, true); ok {
			t.Fatalf("%T: read without the session", data)
		}
		for k, v := range kv.m {
			if !strings.HasPrefix(k, flashPrefix) || strings.Contains(k, id) || strings.Contains(k, session) || strings.Contains(string(v.v), session) {
				t.Fatalf("stored %q = %q for flash %s of session %s", k, v.v, id, session)
			}
		}
	}
	if _, err := f1.put(ctx, session, flash{Data: 42}); err == nil {
		t.Fatal("a flash took data no page shows")
	}
}
