package ingest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// Start runs the boot ingest and the schedule in the background; Stop ends them.
// The HTTP server does not wait for either: it answers from what is stored.
func (s *Service) Start(ctx context.Context) {
	var boot sync.WaitGroup
	var mu sync.Mutex
	var failed error
	if s.cfg.Feed != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.follow(ctx)
		}()
	}
	for cat := range s.sources.Upstream {
		s.wg.Add(1)
		boot.Add(1)
		go func() {
			defer s.wg.Done()
			s.runCatalog(ctx, cat, func(err error) {
				mu.Lock()
				if err != nil && failed == nil {
					failed = err
				}
				mu.Unlock()
				boot.Done()
			})
		}()
	}
	if s.cfg.BootState != nil && s.cfg.BootIngest {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			boot.Wait()
			if ctx.Err() == nil { // not when stopping
				s.cfg.BootState.BootIngestDone(failed)
			}
		}()
	}
}

// Stop ends the background vector queue (the boot ingest and the schedule
// end with the context given to Start).
func (s *Service) Stop() { s.endLife() }

// Wait blocks until the background work has returned (after Stop and the
// cancellation of Start's context).
func (s *Service) Wait() { s.wg.Wait() }

// runCatalog runs the boot ingest of cat (then calls booted with its
// failure, nil without a boot ingest) and the schedule.
func (s *Service) runCatalog(ctx context.Context, cat core.CatalogID, booted func(error)) {
	var err error
	if s.cfg.BootIngest {
		err = s.runOnce(ctx, cat, "boot", s.cfg.BootTimeout, false)
	}
	booted(err)
	if s.cfg.Interval <= 0 {
		return
	}
	for {
		next, err := s.nextRun(ctx, cat)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.log.Error("reading the schedule failed; retrying in a minute", "catalog", cat, "error", err)
			next = s.now().Add(time.Minute)
		}
		if !sleep(ctx, time.Until(next)) {
			return
		}
		// Another run holding the catalog (here or on another replica)
		// moves the schedule when it ends: look again after a while
		// rather than at once, which spun on the store (and the log) for
		// as long as that run lasted.
		if busy := s.runScheduled(ctx, cat); busy && !sleep(ctx, busyRetry) {
			return
		}
	}
}

// sleep waits for d and reports whether ctx was still live at the end.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// busyRetry is how long the schedule waits before looking again when the
// run that fell due is held by another ingest of the catalog.
const busyRetry = time.Second

// runScheduled runs the ingest that fell due, once across replicas: every
// replica wakes at the shared NextIngest, the first to take the run lock
// runs it and moves the schedule on before letting go, and one that gets
// the lock later finds the schedule already moved and skips. It reports
// whether another ingest of the catalog held it.
func (s *Service) runScheduled(ctx context.Context, cat core.CatalogID) (busy bool) {
	ctx, err := s.begin(ctx, cat)
	if err != nil {
		if core.KindOf(err) == core.KindBusy {
			s.log.Info("scheduled ingest skipped: an ingest of the catalog is running", "catalog", cat)
			return true
		}
		s.log.Error("scheduled ingest not started", "catalog", cat, "error", err)
		return false
	}
	defer s.end(cat)
	if m, err := s.store.Meta(ctx, cat); err == nil && m.NextIngest.After(s.now()) {
		s.log.Info("scheduled ingest skipped: another replica ran it", "catalog", cat, "next", m.NextIngest)
		return
	}
	_ = s.runOnce(ctx, cat, "scheduled", 0, true)
	if err := s.updateMeta(ctx, cat, func(m *core.CatalogMeta) { m.NextIngest = advance(m.NextIngest, s.now(), s.cfg.Interval) }); err != nil {
		s.log.Error("persisting the schedule failed", "catalog", cat, "error", err)
	}
	return false
}

// nextRun returns the persisted next run time, creating or repairing it. A
// restart keeps the persisted phase; a schedule further away than one
// interval (the interval was shortened) is pulled in.
func (s *Service) nextRun(ctx context.Context, cat core.CatalogID) (time.Time, error) {
	var next time.Time
	err := s.updateMeta(ctx, cat, func(m *core.CatalogMeta) {
		now := s.now()
		switch {
		case m.NextIngest.IsZero() || m.NextIngest.After(now.Add(s.cfg.Interval)):
			m.NextIngest = now.Add(s.cfg.Interval).UTC()
		case !m.NextIngest.After(now) && s.cfg.BootIngest:
			// The boot ingest just served the run that was due.
			m.NextIngest = advance(m.NextIngest, now, s.cfg.Interval)
		}
		next = m.NextIngest
	})
	return next, err
}

// advance moves a schedule forward by whole intervals until it is after now,
// keeping its phase (the same weekday and hour).
func advance(next, now time.Time, every time.Duration) time.Time {
	if next.IsZero() {
		return now.Add(every).UTC()
	}
	for !next.After(now) {
		next = next.Add(every)
	}
	return next.UTC()
}

// runOnce runs an upstream ingest of cat and reports its failure; taken
// says the caller holds the catalog's run already (begin).
func (s *Service) runOnce(parent context.Context, cat core.CatalogID, why string, timeout time.Duration, taken bool) error {
	ctx := parent
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, timeout)
		defer cancel()
	}
	run := s.RunUpstream
	if taken {
		run = s.runTaken
	}
	res, err := run(ctx, cat)
	if parent.Err() != nil && !errors.Is(context.Cause(parent), errRunLockLost) {
		return parent.Err() // shutting down: whatever happened is not an ingest failure
	}
	if core.KindOf(err) == core.KindBusy {
		s.log.Info("ingest skipped: another ingest of the catalog is running", "catalog", cat, "run", why)
		return nil
	}
	if err != nil {
		s.log.Error("ingest failed", "catalog", cat, "run", why, "error", err)
		ctx := context.WithoutCancel(ctx) // a run stopped by its lost lock still reports it
		ev := core.NewEvent(core.EventIngestFailed, cat, s.now())
		ev.Error = why + " ingest: " + err.Error()
		ev.IngestOrigin, ev.Version = res.Origin, s.storedVersion(ctx, cat)
		s.publish(ctx, ev)
		return err
	}
	s.log.Info("ingest finished", "catalog", cat, "run", why, "origin", res.Origin, "upserted", res.Upserted)
	return nil
}
