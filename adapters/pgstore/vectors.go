package pgstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Vectors are rows of table vectors, (embedder, catalog, id) -> hash and
// the vector as little-endian float32s. They are derived data
// (recomputable from the resources); PutVectors writes a call's vectors in
// one transaction, in statements of vecChunk rows.

var _ ports.VectorStore = (*Store)(nil)

const vecChunk = 2000

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVec(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("pgstore: corrupt vector of %d bytes", len(b))
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// PutVectors stores vectors of one embedder, replacing earlier ones of the
// same keys; of a key given twice the last wins.
func (s *Store) PutVectors(ctx context.Context, embedderID string, vs []ports.StoredVector) error {
	if len(vs) == 0 {
		return nil
	}
	last := make(map[core.Key]int, len(vs))
	for i, v := range vs {
		last[v.Key] = i
	}
	n := len(last)
	cats, ids, hashes := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	vecs := make([][]byte, 0, n)
	for i, v := range vs {
		if last[v.Key] != i {
			continue
		}
		cats, ids, hashes = append(cats, string(v.Key.Catalog)), append(ids, v.Key.ID), append(hashes, v.Hash)
		vecs = append(vecs, encodeVec(v.Vec))
	}
	return s.tx(ctx, fmt.Sprintf("put %d vectors", n), func(tx pgx.Tx) error {
		for lo := 0; lo < n; lo += vecChunk {
			hi := min(n, lo+vecChunk)
			_, err := tx.Exec(ctx, `
				INSERT INTO vectors (embedder, catalog, id, hash, vec)
				SELECT $1, u.catalog, u.id, u.hash, u.vec
				FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[]) AS u(catalog, id, hash, vec)
				ON CONFLICT (embedder, catalog, id) DO UPDATE SET hash = EXCLUDED.hash, vec = EXCLUDED.vec`,
				embedderID, cats[lo:hi], ids[lo:hi], hashes[lo:hi], vecs[lo:hi])
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// ScanVectors calls fn for every stored vector of the embedder, by
// catalog then id, from one snapshot.
func (s *Store) ScanVectors(ctx context.Context, embedderID string, fn func(ports.StoredVector) error) error {
	var cat, id, hash string
	var raw []byte
	return s.eachRow(ctx, "scan vectors", []any{&cat, &id, &hash, &raw}, func() error {
		vec, err := decodeVec(raw)
		if err != nil {
			return s.dbErr(ctx, "scan vectors", err)
		}
		return fn(ports.StoredVector{Key: core.Key{Catalog: core.CatalogID(cat), ID: id}, Hash: hash, Vec: vec})
	}, `SELECT catalog, id, hash, vec FROM vectors WHERE embedder = $1 ORDER BY catalog, id`, embedderID)
}

var _ ports.VectorHashScanner = (*Store)(nil)

// ScanVectorHashes calls fn with the id and content hash of every vector
// of the embedder in the catalog, in id order (COLLATE "C": bytes), without
// reading the vectors.
func (s *Store) ScanVectorHashes(ctx context.Context, embedderID string, catalog core.CatalogID, fn func(id, hash string) error) error {
	var id, hash string
	return s.eachRow(ctx, "scan vector hashes", []any{&id, &hash}, func() error { return fn(id, hash) },
		`SELECT id, hash FROM vectors WHERE embedder = $1 AND catalog = $2 ORDER BY id`, embedderID, string(catalog))
}

var _ ports.VectorGetter = (*Store)(nil)

// GetVectors returns the stored vectors of the embedder among keys.
func (s *Store) GetVectors(ctx context.Context, embedderID string, keys []core.Key) ([]ports.StoredVector, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	cats, ids := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		cats[i], ids[i] = string(k.Catalog), k.ID
	}
	rows, err := s.pool.Query(ctx, `SELECT v.catalog, v.id, v.hash, v.vec
		FROM unnest($2::text[], $3::text[]) AS k(catalog, id)
		JOIN vectors v ON v.embedder = $1 AND v.catalog = k.catalog AND v.id = k.id`, embedderID, cats, ids)
	if err != nil {
		return nil, s.dbErr(ctx, "get vectors", err)
	}
	var out []ports.StoredVector
	var cat, id, hash string
	var raw []byte
	_, err = pgx.ForEachRow(rows, []any{&cat, &id, &hash, &raw}, func() error {
		vec, err := decodeVec(raw)
		if err != nil {
			return err
		}
		out = append(out, ports.StoredVector{Key: core.Key{Catalog: core.CatalogID(cat), ID: id}, Hash: hash, Vec: vec})
		return nil
	})
	if err != nil {
		return nil, s.dbErr(ctx, "get vectors", err)
	}
	return out, nil
}

// DropVectorsExcept deletes every vector not of embedderID.
func (s *Store) DropVectorsExcept(ctx context.Context, embedderID string) (int, error) {
	var n int64
	err := s.tx(ctx, "drop vectors", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM vectors WHERE embedder <> $1`, embedderID)
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}
