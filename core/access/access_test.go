package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// fakeVerifier answers from a table, counts calls per key and can hold
// calls until released.
type fakeVerifier struct {
	mu       sync.Mutex
	verdicts map[string]core.KeyVerdict
	fail     error
	calls    map[string]int
	total    atomic.Int64
	gate     chan struct{} // when set, calls wait for it to close
}

func newFake() *fakeVerifier {
	return &fakeVerifier{verdicts: map[string]core.KeyVerdict{}, calls: map[string]int{}}
}

func (f *fakeVerifier) Verify(ctx context.Context, key string) (core.KeyVerdict, error) {
	f.total.Add(1)
	f.mu.Lock()
	f.calls[key]++
	gate, fail := f.gate, f.fail
	v, ok := f.verdicts[key]
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return core.KeyVerdict{}, ctx.Err()
		}
	}
	if fail != nil {
		return core.KeyVerdict{}, fail
	}
	if !ok {
		return core.KeyVerdict{Code: core.KeyNotFound}, nil
	}
	return v, nil
}

func (f *fakeVerifier) set(key string, v core.KeyVerdict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verdicts[key] = v
}

func (f *fakeVerifier) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeVerifier) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var valid = core.KeyVerdict{Valid: true, Code: core.KeyValid, Name: "acme"}

func mustCheck(t *testing.T, k *Keys, key string) core.KeyVerdict {
	t.Helper()
	v, err := k.Check(context.Background(), key)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return v
}

// Many sequential requests with one key cost one verifier call.
func TestManyChecksOneCall(t *testing.T) {
	f := newFake()
	f.set("sk_live_1", valid)
	k := New(f, Config{})
	for range 1000 {
		if v := mustCheck(t, k, "sk_live_1"); v != valid {
			t.Fatalf("verdict %+v", v)
		}
	}
	if n := f.count("sk_live_1"); n != 1 {
		t.Errorf("%d verifier calls for 1000 checks, want 1", n)
	}
	if v := mustCheck(t, k, "sk_other"); v.Valid || v.Code != core.KeyNotFound {
		t.Errorf("unknown key: %+v", v)
	}
	if n := f.total.Load(); n != 2 {
		t.Errorf("%d calls in all, want 2 (one per key)", n)
	}
}

// Concurrent checks of one key share a single call, with caching disabled
// so that only the sharing can explain it.
func TestConcurrentChecksShareOneCall(t *testing.T) {
	f := newFake()
	f.set("sk_live_1", valid)
	f.gate = make(chan struct{})
	k := New(f, Config{PositiveTTL: -1, NegativeTTL: -1})

	const n = 50
	var wg sync.WaitGroup
	results := make(chan core.KeyVerdict, n)
	for range n {
		wg.Go(func() {
			v, err := k.Check(context.Background(), "sk_live_1")
			if err != nil {
				t.Error(err)
			}
			results <- v
		})
	}
	waitFor(t, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		fl := k.flights[keyID("sk_live_1")]
		return fl != nil && fl.waiters == n
	})
	close(f.gate)
	wg.Wait()
	close(results)
	for v := range results {
		if v != valid {
			t.Errorf("verdict %+v", v)
		}
	}
	if c := f.count("sk_live_1"); c != 1 {
		t.Errorf("%d verifier calls for %d concurrent checks, want 1", c, n)
	}
	// Nothing is cached (TTLs disabled): the next check asks again.
	mustCheck(t, k, "sk_live_1")
	if c := f.count("sk_live_1"); c != 2 {
		t.Errorf("%d calls after the flight, want 2", c)
	}
}

func TestPositiveEntriesExpire(t *testing.T) {
	f, c := newFake(), newClock()
	f.set("sk_live_1", valid)
	k := New(f, Config{Now: c.Now})
	mustCheck(t, k, "sk_live_1")
	c.advance(59 * time.Second)
	mustCheck(t, k, "sk_live_1")
	if n := f.count("sk_live_1"); n != 1 {
		t.Fatalf("%d calls within the minute, want 1", n)
	}
	// The key was revoked meanwhile: seen once the entry expires.
	f.set("sk_live_1", core.KeyVerdict{Code: core.KeyDisabled, Name: "acme"})
	c.advance(time.Second)
	if v := mustCheck(t, k, "sk_live_1"); v.Valid || v.Code != core.KeyDisabled {
		t.Errorf("after a minute: %+v, want DISABLED", v)
	}
	if n := f.count("sk_live_1"); n != 2 {
		t.Errorf("%d calls after a minute, want 2", n)
	}
}

func TestNegativeEntriesExpire(t *testing.T) {
	f, c := newFake(), newClock()
	k := New(f, Config{Now: c.Now})
	if v := mustCheck(t, k, "sk_new"); v.Valid || v.Code != core.KeyNotFound {
		t.Fatalf("%+v", v)
	}
	c.advance(4 * time.Second)
	mustCheck(t, k, "sk_new")
	if n := f.count("sk_new"); n != 1 {
		t.Fatalf("%d calls within the negative TTL, want 1", n)
	}
	// The key was just issued: accepted once the negative entry expires.
	f.set("sk_new", valid)
	c.advance(time.Second)
	if v := mustCheck(t, k, "sk_new"); v != valid {
		t.Errorf("after 5 s: %+v", v)
	}
	if n := f.count("sk_new"); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

func TestCustomTTLs(t *testing.T) {
	f, c := newFake(), newClock()
	f.set("good", valid)
	k := New(f, Config{Now: c.Now, PositiveTTL: 10 * time.Second, NegativeTTL: time.Second})
	mustCheck(t, k, "good")
	mustCheck(t, k, "bad")
	c.advance(time.Second)
	mustCheck(t, k, "good")
	mustCheck(t, k, "bad")
	if g, b := f.count("good"), f.count("bad"); g != 1 || b != 2 {
		t.Errorf("calls good=%d bad=%d, want 1 and 2", g, b)
	}
	c.advance(9 * time.Second)
	mustCheck(t, k, "good")
	if g := f.count("good"); g != 2 {
		t.Errorf("good asked %d times after 10 s, want 2", g)
	}
}

// A rate-limited verdict is kept no longer than its RetryAfter, which counts
// down while cached.
func TestRetryAfterCountsDown(t *testing.T) {
	f, c := newFake(), newClock()
	f.set("sk_busy", core.KeyVerdict{Code: core.KeyRateLimited, Name: "acme", RetryAfter: 3 * time.Second})
	k := New(f, Config{Now: c.Now})
	if v := mustCheck(t, k, "sk_busy"); v.RetryAfter != 3*time.Second {
		t.Fatalf("%+v", v)
	}
	c.advance(time.Second)
	if v := mustCheck(t, k, "sk_busy"); v.Code != core.KeyRateLimited || v.RetryAfter != 2*time.Second {
		t.Errorf("cached 1 s later: %+v, want RATE_LIMITED with 2 s left", v)
	}
	f.set("sk_busy", valid)
	c.advance(2 * time.Second)
	if v := mustCheck(t, k, "sk_busy"); v != valid {
		t.Errorf("after the reset: %+v", v)
	}
	if n := f.count("sk_busy"); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	f := newFake()
	f.set("sk_live_1", valid)
	outage := errors.New("key service down")
	f.setFail(outage)
	k := New(f, Config{})
	for i := range 3 {
		if _, err := k.Check(context.Background(), "sk_live_1"); !errors.Is(err, outage) {
			t.Fatalf("check %d: err %v, want the outage", i, err)
		}
	}
	if n := f.count("sk_live_1"); n != 3 {
		t.Fatalf("%d calls for 3 failing checks, want 3 (errors not cached)", n)
	}
	f.setFail(nil)
	if v := mustCheck(t, k, "sk_live_1"); v != valid {
		t.Errorf("after the outage: %+v", v)
	}
	mustCheck(t, k, "sk_live_1")
	if n := f.count("sk_live_1"); n != 4 {
		t.Errorf("%d calls, want 4", n)
	}
}

// Every check waiting on a failing call gets the error.
func TestConcurrentChecksShareTheError(t *testing.T) {
	f := newFake()
	f.gate = make(chan struct{})
	f.setFail(errors.New("503"))
	k := New(f, Config{})
	const n = 10
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := k.Check(context.Background(), "sk_x")
			errs <- err
		}()
	}
	waitFor(t, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		fl := k.flights[keyID("sk_x")]
		return fl != nil && fl.waiters == n
	})
	close(f.gate)
	for range n {
		if err := <-errs; err == nil {
			t.Error("a waiter got no error")
		}
	}
	if c := f.count("sk_x"); c != 1 {
		t.Errorf("%d calls, want 1", c)
	}
	if k.Len() != 0 {
		t.Errorf("%d cached entries after an error, want 0", k.Len())
	}
}

// A check whose context ends stops waiting; the shared call goes on for the
// others and its verdict is cached.
func TestCallerGivingUpDoesNotFailOthers(t *testing.T) {
	f := newFake()
	f.set("sk_live_1", valid)
	f.gate = make(chan struct{})
	k := New(f, Config{})

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := k.Check(ctx, "sk_live_1")
		first <- err
	}()
	second := make(chan core.KeyVerdict, 1)
	go func() {
		v, err := k.Check(context.Background(), "sk_live_1")
		if err != nil {
			t.Error(err)
		}
		second <- v
	}()
	waitFor(t, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		fl := k.flights[keyID("sk_live_1")]
		return fl != nil && fl.waiters == 2
	})
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) || core.KindOf(err) != core.KindUnavailable {
		t.Errorf("cancelled caller: %v", err)
	}
	close(f.gate)
	if v := <-second; v != valid {
		t.Errorf("other caller: %+v", v)
	}
	mustCheck(t, k, "sk_live_1")
	if c := f.count("sk_live_1"); c != 1 {
		t.Errorf("%d calls, want 1", c)
	}
}

// A verifier that never answers is cut off by CallTimeout.
func TestCallTimeout(t *testing.T) {
	f := newFake()
	f.gate = make(chan struct{}) // never closed
	k := New(f, Config{CallTimeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := k.Check(context.Background(), "sk_slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestBoundedSize(t *testing.T) {
	f := newFake()
	k := New(f, Config{MaxEntries: 3})
	for i := range 3 {
		f.set(fmt.Sprint("k", i), valid)
		mustCheck(t, k, fmt.Sprint("k", i))
	}
	mustCheck(t, k, "k0") // k0 is now the most recently used, k1 the least
	mustCheck(t, k, "k3")
	if k.Len() != 3 {
		t.Fatalf("%d entries, want 3", k.Len())
	}
	mustCheck(t, k, "k0")
	mustCheck(t, k, "k2")
	mustCheck(t, k, "k1")
	if got := []int{f.count("k0"), f.count("k1"), f.count("k2")}; got[0] != 1 || got[1] != 2 || got[2] != 1 {
		t.Errorf("calls k0,k1,k2 = %v, want [1 2 1]: the least recently used goes first", got)
	}
	if k.Len() != 3 {
		t.Errorf("%d entries, want 3", k.Len())
	}
}

func TestEmptyKeyIsNotFoundWithoutACall(t *testing.T) {
	f := newFake()
	k := New(f, Config{})
	if v := mustCheck(t, k, ""); v.Valid || v.Code != core.KeyNotFound {
		t.Errorf("%+v", v)
	}
	if n := f.total.Load(); n != 0 {
		t.Errorf("%d calls", n)
	}
}

// The cache never holds the key: entries are indexed by its SHA-256.
func TestCacheHoldsNoKey(t *testing.T) {
	f := newFake()
	const key = "sk_live_very_secret_1234567890"
	f.set(key, valid)
	k := New(f, Config{})
	mustCheck(t, k, key)
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, el := range k.entries {
		dump := fmt.Sprintf("%v %+v", id, *el.Value.(*entry))
		if strings.Contains(dump, key) || strings.Contains(string(id[:]), key) {
			t.Errorf("cache entry holds the key: %s", dump)
		}
		if id != keyID(key) {
			t.Errorf("entry not indexed by the SHA-256 of the key")
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}
