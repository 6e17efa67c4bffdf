package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/x448/float16"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Vectors live under vec/<escaped embedder id>/<catalog>/<id> as
// [1-byte flags and hash length][hash][the vector]. They are derived data
// (recomputable from the resources), so they are written with a
// WriteBatch rather than one bounded transaction.
//
// The vector is kept as IEEE half-precision floats (binary16: 640 bytes
// at 320 dimensions instead of 1,280), marked by the top bit of the first
// byte; records without it, written before, hold float32s and are still
// read. Half precision keeps 11 significant bits, a relative error of at
// most 2^-11 per coordinate, far below what the vector index's int8 codes
// round away (adapters/hnsw), and it halves what the value log holds and
// maps: at 1,000,000 resources 0.64 GB instead of 1.28 GB.
const vecPrefix = "vec/"

// vecHalf marks a record whose vector is binary16; the low 7 bits of the
// first byte are the hash's length.
const vecHalf = 0x80

var _ ports.VectorStore = (*Store)(nil)

func vecEmbedderPrefix(embedderID string) []byte {
	return []byte(vecPrefix + url.PathEscape(embedderID) + "/")
}

func vecKey(embedderID string, k core.Key) []byte {
	return append(vecEmbedderPrefix(embedderID), []byte(string(k.Catalog)+"/"+k.ID)...)
}

func encodeVec(v ports.StoredVector) ([]byte, error) {
	if len(v.Hash) >= vecHalf {
		return nil, fmt.Errorf("badgerstore: vector hash of %s too long (%d bytes, at most %d)", v.Key, len(v.Hash), vecHalf-1)
	}
	b := make([]byte, 1+len(v.Hash)+2*len(v.Vec))
	b[0] = vecHalf | byte(len(v.Hash))
	copy(b[1:], v.Hash)
	off := 1 + len(v.Hash)
	for i, f := range v.Vec {
		binary.LittleEndian.PutUint16(b[off+2*i:], float16.Fromfloat32(f).Bits())
	}
	return b, nil
}

func decodeVec(key, val []byte, prefix []byte) (ports.StoredVector, error) {
	rest := string(bytes.TrimPrefix(key, prefix))
	cat, id, ok := strings.Cut(rest, "/")
	hash, raw, half, okVal := splitVec(val)
	width := 4
	if half {
		width = 2
	}
	if !ok || !okVal || len(raw)%width != 0 {
		return ports.StoredVector{}, fmt.Errorf("badgerstore: corrupt vector record %q", key)
	}
	out := ports.StoredVector{Key: core.Key{Catalog: core.CatalogID(cat), ID: id}, Hash: string(hash)}
	out.Vec = make([]float32, len(raw)/width)
	for i := range out.Vec {
		if half {
			out.Vec[i] = float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32()
		} else {
			out.Vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return out, nil
}

// splitVec splits a vector record into its content hash and its raw
// coordinates, binary16 when half; ok is false when it is too short.
func splitVec(val []byte) (hash, raw []byte, half, ok bool) {
	if len(val) < 1 {
		return nil, nil, false, false
	}
	half = val[0]&vecHalf != 0
	n := int(val[0] &^ vecHalf)
	if len(val) < 1+n {
		return nil, nil, false, false
	}
	return val[1 : 1+n], val[1+n:], half, true
}

// PutVectors stores vectors of one embedder, replacing earlier ones of the same keys.
func (s *Store) PutVectors(ctx context.Context, embedderID string, vs []ports.StoredVector) error {
	if len(vs) == 0 {
		return nil
	}
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	defer s.changed()
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	var n int
	for _, v := range vs {
		b, err := encodeVec(v)
		if err != nil {
			return err
		}
		if err := wb.Set(vecKey(embedderID, v.Key), b); err != nil {
			return s.writeErr("put vectors", err)
		}
		n += valueBytes(len(b))
	}
	if err := wb.Flush(); err != nil {
		return s.writeErr("put vectors", err)
	}
	s.wrote(n)
	return nil
}

// ScanVectors calls fn for every stored vector of the embedder.
func (s *Store) ScanVectors(ctx context.Context, embedderID string, fn func(ports.StoredVector) error) error {
	prefix := vecEmbedderPrefix(embedderID)
	return s.each(ctx, "", prefix, true, func(item *badger.Item) error {
		val, err := item.ValueCopy(nil)
		if err != nil {
			return storeErr("scan vectors", err)
		}
		v, err := decodeVec(item.Key(), val, prefix)
		if err != nil {
			return err
		}
		return fn(v)
	})
}

var _ ports.VectorHashScanner = (*Store)(nil)

// ScanVectorHashes calls fn with the id and content hash of every stored
// vector of the embedder in the catalog, in id order, leaving its
// coordinates undecoded.
func (s *Store) ScanVectorHashes(ctx context.Context, embedderID string, catalog core.CatalogID, fn func(id, hash string) error) error {
	prefix := append(vecEmbedderPrefix(embedderID), string(catalog)+"/"...)
	return s.each(ctx, "", prefix, false, func(item *badger.Item) error {
		var hash string
		err := item.Value(func(val []byte) error {
			h, _, _, ok := splitVec(val)
			if !ok {
				return fmt.Errorf("badgerstore: corrupt vector record %q", item.Key())
			}
			hash = string(h)
			return nil
		})
		if err != nil {
			return storeErr("scan vectors", err)
		}
		return fn(string(item.Key()[len(prefix):]), hash)
	})
}

var _ ports.VectorGetter = (*Store)(nil)

// GetVectors returns the stored vectors of the embedder among keys.
func (s *Store) GetVectors(ctx context.Context, embedderID string, keys []core.Key) ([]ports.StoredVector, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	prefix := vecEmbedderPrefix(embedderID)
	var out []ports.StoredVector
	err := s.db.View(func(txn *badger.Txn) error {
		for _, k := range keys {
			item, err := txn.Get(vecKey(embedderID, k))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return storeErr("get vectors", err)
			}
			var v ports.StoredVector
			err = item.Value(func(val []byte) error {
				var derr error
				v, derr = decodeVec(item.Key(), val, prefix)
				return derr
			})
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// DropVectorsExcept deletes every vector not of embedderID, so a model
// change never leaves two models' vectors side by side.
func (s *Store) DropVectorsExcept(ctx context.Context, embedderID string) (int, error) {
	if err := s.enterWrite(ctx); err != nil {
		return 0, err
	}
	defer s.leaveWrite()
	defer s.changed()
	keep := vecEmbedderPrefix(embedderID)
	var doomed [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte(vecPrefix)
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if k := it.Item().Key(); !bytes.HasPrefix(k, keep) {
				doomed = append(doomed, it.Item().KeyCopy(nil))
			}
		}
		return nil
	})
	if err != nil || len(doomed) == 0 {
		return 0, err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range doomed {
		if err := wb.Delete(k); err != nil {
			return 0, s.writeErr("drop vectors", err)
		}
	}
	return len(doomed), s.writeErr("drop vectors", wb.Flush())
}
