package status

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Stamper is ports.DataStamp over the catalogs' metadata: every write of a
// catalog (ingest, file, batch) stores its dataset version and the time it
// finished with its resources, in the same transaction, so the pair of
// every catalog names the stored data. It is read once per generation of
// the Visibility gate (a write moves the generation before readers see it).
type Stamper struct {
	store ports.ResourceStore
	gens  ports.Generations

	mu    sync.Mutex
	ok    bool
	gen   uint64
	token string
	mod   time.Time
}

// NewStamper reads the stamp from the store's catalog metadata.
func NewStamper(store ports.ResourceStore, gens ports.Generations) *Stamper {
	return &Stamper{store: store, gens: gens}
}

// Generation is the gate's: it moves with every visible write.
func (s *Stamper) Generation() uint64 { return s.gens.Generation() }

// Stamp returns the token of the stored data and its latest write time.
func (s *Stamper) Stamp(ctx context.Context) (string, time.Time, error) {
	gen := s.gens.Generation()
	s.mu.Lock()
	if s.ok && s.gen == gen {
		t, m := s.token, s.mod
		s.mu.Unlock()
		return t, m, nil
	}
	s.mu.Unlock()
	h := sha256.New()
	var mod time.Time
	for _, c := range core.Catalogs {
		m, err := s.store.Meta(ctx, c)
		if err != nil {
			return "", time.Time{}, core.Unavailablef(err, "store unavailable")
		}
		h.Write([]byte(string(c) + "\x00" + m.Version + "\x00" + m.DemoSnapshot + "\x00" +
			strconv.FormatInt(m.LastIngest.UnixNano(), 10) + "\n"))
		if m.LastIngest.After(mod) {
			mod = m.LastIngest
		}
	}
	token := hex.EncodeToString(h.Sum(nil)[:12])
	s.mu.Lock()
	// Read after the generation: at least as new as it; a newer
	// generation read meanwhile keeps its own.
	if !s.ok || gen >= s.gen {
		s.ok, s.gen, s.token, s.mod = true, gen, token, mod
	}
	s.mu.Unlock()
	return token, mod, nil
}
