package ingest

import (
	"context"
	"sync"

	"github.com/climatesearch/climatesearch/core"
)

// vectorQueue holds the vector updates that run in the background, in the
// order of their ingests, and runs them one after the other (each on every
// core): two updates of one resource never land out of order.
type vectorQueue struct {
	mu      sync.Mutex
	jobs    []vectorJob
	running bool
}

type vectorJob struct {
	catalog core.CatalogID
	upsert  []core.Resource
	remove  []core.Key
}

// updateVectors embeds the new and changed resources of an ingest and drops
// the vectors of withdrawn ones. A small ingest is embedded before it
// answers, unless updates are already queued: then it joins the queue
// rather than wait for them (vectors lag the text index anyway; search says
// how far). A large one always goes to the queue, so its answer does not
// wait for minutes of embedding and graph building. A failing embedder
// leaves resources without vectors (full text still finds them); the next
// boot retries.
func (s *Service) updateVectors(ctx context.Context, cat core.CatalogID, upsert []core.Resource, remove []core.Key) {
	if s.vectors == nil || len(upsert)+len(remove) == 0 {
		return
	}
	s.vq.mu.Lock()
	if !s.vq.running && len(upsert) <= syncEmbedLimit {
		s.vq.mu.Unlock()
		if _, err := s.vectors.Update(ctx, upsert, remove); err != nil {
			s.log.ErrorContext(ctx, "embedding failed; affected resources are found by full-text only until the next boot", "catalog", cat, "error", err)
		}
		return
	}
	s.vq.jobs = append(s.vq.jobs, vectorJob{catalog: cat, upsert: upsert, remove: remove})
	s.vectors.AddBacklog(len(upsert))
	if !s.vq.running {
		s.vq.running = true
		s.wg.Add(1)
		// Not ctx, not even its values: the queue outlives the request
		// that started it, and a caller's context may be recycled once
		// the call returns (gin pools its contexts; reading one later is
		// a data race).
		go s.runVectors(context.Background())
	}
	s.vq.mu.Unlock()
}

// runVectors works through the queue until it is empty.
func (s *Service) runVectors(ctx context.Context) {
	defer s.wg.Done()
	for {
		s.vq.mu.Lock()
		if len(s.vq.jobs) == 0 {
			s.vq.running = false
			s.vq.mu.Unlock()
			return
		}
		job := s.vq.jobs[0]
		s.vq.jobs = s.vq.jobs[1:]
		s.vq.mu.Unlock()

		start := s.now()
		n, err := s.vectors.Update(ctx, job.upsert, job.remove)
		s.vectors.AddBacklog(-len(job.upsert))
		if err != nil {
			s.log.Error("background embedding failed; affected resources are found by full-text only until the next boot", "catalog", job.catalog, "error", err)
		}
		s.log.Info("background embedding done", "catalog", job.catalog, "vectors", n, "took", s.now().Sub(start).String())
	}
}
