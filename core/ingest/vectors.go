package ingest

import (
	"context"
	"sync"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// vectorQueue holds the vector updates that run in the background, in the
// order of their ingests, and runs them one after the other (each on every
// core): two updates of one resource never land out of order.
type vectorQueue struct {
	mu      sync.Mutex
	jobs    []vectorJob
	running bool
}

// vectorJob is one ingest's vector update. It holds the keys of the new
// and changed resources, not the resources: a bulk load can queue a
// million of them while the vectors lag, and the worker reads each batch
// back from the store when it gets to it (embedding the version stored
// then, which a later job of the same key would embed anyway).
type vectorJob struct {
	catalog core.CatalogID
	upsert  []core.Key
	remove  []core.Key
	// followed: another replica wrote the change, and embeds it too
	// (followVectors).
	followed bool
}

// updateVectors embeds the new and changed resources of an ingest and drops
// the vectors of withdrawn ones. A small ingest is embedded before it
// answers, unless updates are already queued: then it joins the queue
// rather than wait for them (vectors lag the text index anyway; search says
// how far). A large one always goes to the queue, so its answer does not
// wait for minutes of embedding and graph building. A failing embedder
// leaves resources without vectors (full text still finds them); the next
// boot retries.
//
// The new and changed resources are puts[changed[i]].
func (s *Service) updateVectors(ctx context.Context, cat core.CatalogID, puts []ports.StoredResource, changed []int, remove []core.Key) {
	if s.vectors == nil || len(changed)+len(remove) == 0 {
		return
	}
	s.vq.mu.Lock()
	if !s.vq.running && len(changed) <= syncEmbedLimit {
		s.vq.mu.Unlock()
		if _, err := s.vectors.Update(ctx, resourcesAt(puts, changed), remove); err != nil {
			s.log.ErrorContext(ctx, "embedding failed; affected resources are found by full-text only until the next boot", "catalog", cat, "error", err)
		}
		return
	}
	s.queueLocked(vectorJob{catalog: cat, upsert: keysAt(puts, changed), remove: remove})
	s.vq.mu.Unlock()
}

// queueVectors queues the vectors of a change in the background: what
// updateVectors does with a large change, given its keys.
func (s *Service) queueVectors(cat core.CatalogID, keys, remove []core.Key) {
	s.queue(vectorJob{catalog: cat, upsert: keys, remove: remove})
}

// followVectors queues the vectors of a change another replica wrote. That
// replica embeds it too, so the job waits for the vectors it stores and
// takes them (embedding.Syncer.Follow, up to Config.FollowVectorWait per
// batch) instead of calling the embedder again for every replica.
func (s *Service) followVectors(cat core.CatalogID, keys, remove []core.Key) {
	s.queue(vectorJob{catalog: cat, upsert: keys, remove: remove, followed: true})
}

// queue queues a job that has something to do.
func (s *Service) queue(job vectorJob) {
	if s.vectors == nil || len(job.upsert)+len(job.remove) == 0 {
		return
	}
	s.vq.mu.Lock()
	s.queueLocked(job)
	s.vq.mu.Unlock()
}

// queueLocked appends a job to the queue and starts its worker; s.vq.mu is
// held.
func (s *Service) queueLocked(job vectorJob) {
	s.vq.jobs = append(s.vq.jobs, job)
	s.vectors.AddBacklog(len(job.upsert))
	if !s.vq.running {
		s.vq.running = true
		s.wg.Add(1)
		// Not ctx, not even its values: the queue outlives the request
		// that started it, and a caller's context may be recycled once
		// the call returns (gin pools its contexts; reading one later is
		// a data race). It ends with the service (Stop).
		go s.runVectors(s.life)
	}
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
		var n int
		var err error
		if job.followed {
			n, err = s.vectors.Follow(ctx, job.upsert, job.remove, s.cfg.FollowVectorWait)
		} else {
			n, err = s.vectors.UpdateKeys(ctx, job.upsert, job.remove)
		}
		s.vectors.AddBacklog(-len(job.upsert))
		if ctx.Err() != nil {
			// Stopping: what is left is computed by the next start
			// (embedding.Syncer.Boot embeds what has no vector).
			s.vq.mu.Lock()
			s.vq.jobs, s.vq.running = nil, false
			s.vq.mu.Unlock()
			s.log.Info("background embedding stopped with the service; the next start computes the rest", "catalog", job.catalog)
			return
		}
		if err != nil {
			s.log.Error("background embedding failed; affected resources are found by full-text only until the next boot", "catalog", job.catalog, "error", err)
		}
		s.log.Info("background embedding done", "catalog", job.catalog, "vectors", n, "took", s.now().Sub(start).String())
	}
}
