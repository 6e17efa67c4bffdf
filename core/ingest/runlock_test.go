package ingest_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
)

// losable is the replicas' run lock, which a test takes away from its
// holder by closing lost.
type losable struct {
	lost     chan struct{}
	mu       sync.Mutex
	held     map[string]bool
	unlocked int
}

func (l *losable) TryLock(_ context.Context, name string) (ports.HeldLock, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[name] {
		return ports.HeldLock{}, false, nil
	}
	l.held[name] = true
	var once sync.Once
	return ports.HeldLock{Lost: l.lost, Unlock: func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.held, name)
			l.unlocked++
			l.mu.Unlock()
		})
	}}, true, nil
}

// stalled is a publisher that answers only when the caller gives up; it
// tells when a fetch has started.
type stalled struct{ started chan struct{} }

func (stalled) Name() string { return "stalled" }

func (s stalled) Fetch(ctx context.Context) (core.Release, error) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return core.Release{}, ctx.Err()
}

// TestRunStopsWhenItsLockIsLost: an upstream run whose lock across
// replicas goes while it runs (the connection to the shared store broke)
// stops, says why, and gives its run back.
func TestRunStopsWhenItsLockIsLost(t *testing.T) {
	store, index := storeAndIndex(t)
	locks := &losable{lost: make(chan struct{}), held: map[string]bool{}}
	src := stalled{started: make(chan struct{}, 1)}
	svc := ingest.New(ingest.Config{Locks: locks}, store, index, core.NewVisibility(), nil, noEvents{},
		ingest.Sources{Upstream: map[core.CatalogID][]ports.CatalogSource{core.National: {src}}}, quiet)
	t.Cleanup(func() { svc.Stop(); svc.Wait() })

	errc := make(chan error, 1)
	go func() {
		_, err := svc.RunUpstream(context.Background(), core.National)
		errc <- err
	}()
	<-src.started
	close(locks.lost)
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("the run went on after its lock was lost")
	}
	if core.KindOf(err) != core.KindUnavailable || !strings.Contains(err.Error(), "its lock across replicas was lost") {
		t.Fatalf("run after the lock was lost: %v", err)
	}
	locks.mu.Lock()
	held, unlocked := len(locks.held), locks.unlocked
	locks.mu.Unlock()
	if held != 0 || unlocked != 1 {
		t.Fatalf("after the run: %d locks held, %d given back", held, unlocked)
	}
	// The run is free again in this process: the next one starts (and
	// stops at once, its lock reported lost as well), not busy.
	if _, err := svc.RunUpstream(context.Background(), core.National); core.KindOf(err) == core.KindBusy {
		t.Fatalf("next run: %v", err)
	}
	if n, _ := store.Count(context.Background(), core.National); n != 0 {
		t.Fatalf("%d resources stored", n)
	}
}
