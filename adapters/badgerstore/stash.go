package badgerstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Stashed files live under stash/<id>/meta and stash/<id>/<n> (1 MiB
// chunks: a value must fit a value-log file), every key with the same TTL,
// so an expired preview disappears whole, also across restarts.
const (
	stashPrefix = "stash/"
	stashChunk  = 1 << 20
)

var _ ports.FileStash = (*Store)(nil)

type stashMeta struct {
	Filename string `json:"filename"`
	Size     int    `json:"size"`
	Chunks   int    `json:"chunks"`
	// StashedAt dates the upload (zero for stashes of older versions).
	StashedAt time.Time `json:"stashed_at,omitzero"`
}

func expiry(ttl time.Duration) uint64 {
	at := time.Now().Add(ttl)
	secs := at.Unix()
	if at.Nanosecond() > 0 {
		secs++ // Badger keeps whole seconds; never expire early
	}
	return uint64(secs)
}

// Stash keeps f for ttl.
func (s *Store) Stash(ctx context.Context, id string, f core.StashedFile, ttl time.Duration) error {
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	exp := expiry(ttl)
	n := (len(f.Data) + stashChunk - 1) / stashChunk
	at := f.StashedAt
	if at.IsZero() {
		at = time.Now()
	}
	meta, err := json.Marshal(stashMeta{Filename: f.Filename, Size: len(f.Data), Chunks: n, StashedAt: at.UTC()})
	if err != nil {
		return err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for i := 0; i < n; i++ {
		part := f.Data[i*stashChunk : min(len(f.Data), (i+1)*stashChunk)]
		e := badger.NewEntry([]byte(fmt.Sprintf("%s%s/%06d", stashPrefix, id, i)), part)
		e.ExpiresAt = exp
		if err := wb.SetEntry(e); err != nil {
			return s.writeErr("stash", err)
		}
	}
	// The meta goes last: a reader that sees it sees every chunk.
	if err := wb.Flush(); err != nil {
		return s.writeErr("stash", err)
	}
	s.wrote(valueBytes(min(len(f.Data), stashChunk)) * n) // expired chunks are garbage too
	e := badger.NewEntry([]byte(stashPrefix+id+"/meta"), meta)
	e.ExpiresAt = exp
	return s.writeErr("stash", s.db.Update(func(txn *badger.Txn) error { return txn.SetEntry(e) }))
}

// Stashed returns a stashed file; found is false when it is absent or expired.
func (s *Store) Stashed(ctx context.Context, id string) (core.StashedFile, bool, error) {
	if err := s.enter(ctx); err != nil {
		return core.StashedFile{}, false, err
	}
	defer s.leave()
	var out core.StashedFile
	found := false
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(stashPrefix + id + "/meta"))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return storeErr("stash get", err)
		}
		var m stashMeta
		if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &m) }); err != nil {
			return err
		}
		data := make([]byte, 0, m.Size)
		for i := 0; i < m.Chunks; i++ {
			item, err := txn.Get([]byte(fmt.Sprintf("%s%s/%06d", stashPrefix, id, i)))
			if errors.Is(err, badger.ErrKeyNotFound) {
				return nil // expiring right now: treat as gone
			}
			if err != nil {
				return storeErr("stash get", err)
			}
			if err := item.Value(func(v []byte) error { data = append(data, v...); return nil }); err != nil {
				return err
			}
		}
		out = core.StashedFile{Filename: m.Filename, Data: data, StashedAt: m.StashedAt}
		found = len(data) == m.Size
		return nil
	})
	return out, found, err
}
