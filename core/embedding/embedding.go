// Package embedding keeps the vector index in step with the store: vectors
// are computed for new and changed resources only, stored with the
// embedder's identity, loaded at boot, and recomputed when the configured
// embedder changes. Vectors of two models are never mixed.
package embedding

import (
	"context"
	"errors"
	"log/slog"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// batchSize bounds one embedding call; servers limit their batch sizes.
const batchSize = 64

// Syncer computes, stores and indexes vectors. A nil *Syncer (no embedder
// configured) does nothing.
type Syncer struct {
	embedder ports.Embedder
	vectors  ports.VectorStore
	index    ports.VectorIndex
	store    ports.ResourceStore
	log      *slog.Logger
}

// New returns a Syncer, or nil when no embedder is configured.
func New(e ports.Embedder, vs ports.VectorStore, ix ports.VectorIndex, st ports.ResourceStore, log *slog.Logger) *Syncer {
	if e == nil {
		return nil
	}
	return &Syncer{embedder: e, vectors: vs, index: ix, store: st, log: log}
}

// Embedder returns the configured embedder (nil on a nil Syncer).
func (s *Syncer) Embedder() ports.Embedder {
	if s == nil {
		return nil
	}
	return s.embedder
}

// Index returns the vector index (nil on a nil Syncer).
func (s *Syncer) Index() ports.VectorIndex {
	if s == nil {
		return nil
	}
	return s.index
}

// Boot drops other models' vectors, loads this model's vectors of live
// resources whose content is unchanged, and embeds the rest. It returns how
// many were loaded and how many computed.
func (s *Syncer) Boot(ctx context.Context) (loaded, computed int, err error) {
	if s == nil {
		return 0, 0, nil
	}
	id := s.embedder.ID()
	if n, err := s.vectors.DropVectorsExcept(ctx, id); err != nil {
		return 0, 0, err
	} else if n > 0 {
		s.log.Info("dropped vectors of another embedder", "count", n, "embedder", id)
	}
	stored := map[core.Key]ports.StoredVector{}
	err = s.vectors.ScanVectors(ctx, id, func(v ports.StoredVector) error {
		stored[v.Key] = v
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var stale []core.Resource
	for _, c := range core.Catalogs {
		err := s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
			if sr.Resource.Withdrawn {
				return nil
			}
			if v, ok := stored[sr.Resource.Key()]; ok && v.Hash == sr.Hash && len(v.Vec) == ports.EmbeddingDim {
				loaded++
				return s.index.Upsert(ctx, v.Key, v.Vec)
			}
			stale = append(stale, sr.Resource)
			return nil
		})
		if err != nil {
			return loaded, 0, err
		}
	}
	computed, err = s.Update(ctx, stale, nil)
	return loaded, computed, err
}

// Update embeds and stores the vectors of upserted resources and removes
// those of withdrawn ones. Partial failure leaves the failed resources
// without vectors (full-text still finds them) and is reported.
func (s *Syncer) Update(ctx context.Context, upserted []core.Resource, removed []core.Key) (int, error) {
	if s == nil {
		return 0, nil
	}
	if err := s.index.Remove(ctx, removed); err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	for start := 0; start < len(upserted); start += batchSize {
		end := min(start+batchSize, len(upserted))
		batch := upserted[start:end]
		texts := make([]string, len(batch))
		for i := range batch {
			texts[i] = core.EmbeddingText(&batch[i])
		}
		vecs, err := s.embedder.EmbedDocuments(ctx, texts)
		if err == nil && len(vecs) != len(batch) {
			err = errors.New("embedder returned a different number of vectors than texts")
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows := make([]ports.StoredVector, 0, len(batch))
		for i := range batch {
			if len(vecs[i]) != ports.EmbeddingDim || zero(vecs[i]) {
				continue // nothing to embed (no text); full-text only
			}
			rows = append(rows, ports.StoredVector{Key: batch[i].Key(), Hash: core.ContentHash(&batch[i]), Vec: vecs[i]})
		}
		if err := s.vectors.PutVectors(ctx, s.embedder.ID(), rows); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range rows {
			if err := s.index.Upsert(ctx, r.Key, r.Vec); err != nil {
				errs = append(errs, err)
				break
			}
			done++
		}
	}
	return done, errors.Join(errs...)
}

func zero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}
