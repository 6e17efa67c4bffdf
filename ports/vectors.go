package ports

import (
	"context"

	"github.com/climatesearch/climatesearch/core"
)

// EmbeddingDim is the length of every vector the service stores and queries.
// It is fixed so the vector index has one shape whichever embedder runs.
const EmbeddingDim = 320

// Embedder turns text into 320-dimensional, L2-normalised vectors.
type Embedder interface {
	// ID identifies the model and its settings; vectors of two IDs are never mixed.
	ID() string
	Dim() int
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Reranker reorders documents by relevance to a query.
type Reranker interface {
	ID() string
	// Rerank returns one score per document, in the documents' order.
	Rerank(ctx context.Context, query string, documents []string) ([]float64, error)
}

// VectorIndex finds the stored vectors nearest to a query vector. It holds
// only live resources and only vectors of one embedder.
type VectorIndex interface {
	Upsert(ctx context.Context, key core.Key, vec []float32) error
	// UpsertMany is Upsert of each vector (its Hash is not used), the last
	// of a repeated key winning, on as many cores as the index can use. It
	// returns how many vectors were stored and the errors of the others;
	// a cancelled ctx stops it between chunks.
	UpsertMany(ctx context.Context, vs []StoredVector) (int, error)
	Remove(ctx context.Context, keys []core.Key) error
	// Search returns the nearest vectors of the catalogs (all when empty), best first.
	Search(ctx context.Context, vec []float32, catalogs []core.CatalogID, k int) ([]core.Scored, error)
	Len() int
}

// VectorSnapshots is what a VectorIndex offers (the service's HNSW does)
// for being kept across a clean stop instead of rebuilt at start, under
// the mark the store keeps for the text index (ResourceStore.IndexMark).
type VectorSnapshots interface {
	// Persist keeps the whole index, written by the embedder embedderID,
	// under mark. It is called after the last write and before the store
	// keeps the mark.
	Persist(ctx context.Context, embedderID, mark string) error
	// Resume replaces the index's contents with those persisted by
	// embedderID under mark and reports whether it did; false (the index
	// untouched, to be rebuilt) when none matches, with an error when one
	// was found but could not be read. What was kept is taken up once.
	Resume(ctx context.Context, embedderID, mark string) (bool, error)
}

// StoredVector is a resource's vector with the content hash it was computed from.
type StoredVector struct {
	Key  core.Key
	Hash string
	Vec  []float32
}

// VectorStore keeps vectors durably, per embedder, so a restart needs no
// re-embedding and two models' vectors are never mixed. A vector comes
// back to half precision at least (each coordinate within 2^-11 of its
// size): a store may keep float16s.
type VectorStore interface {
	PutVectors(ctx context.Context, embedderID string, vs []StoredVector) error
	// ScanVectors calls fn for every vector of the embedder.
	ScanVectors(ctx context.Context, embedderID string, fn func(StoredVector) error) error
	// DropVectorsExcept deletes the vectors of every other embedder and returns how many.
	DropVectorsExcept(ctx context.Context, embedderID string) (int, error)
}

// VectorHashScanner is a VectorStore that reads the id and content hash
// of each stored vector of a catalog without its coordinates, in id order
// (bytewise, as ports.StateScanner reads the resources): the vector
// coverage walks the two side by side.
type VectorHashScanner interface {
	ScanVectorHashes(ctx context.Context, embedderID string, catalog core.CatalogID, fn func(id, hash string) error) error
}

// VectorGetter is a VectorStore that reads the stored vectors of given
// keys: a replica takes the vectors another replica computed for a change
// it follows instead of computing them again.
type VectorGetter interface {
	// GetVectors returns the stored vectors of the embedder among keys,
	// in no particular order; a key without one is left out.
	GetVectors(ctx context.Context, embedderID string, keys []core.Key) ([]StoredVector, error)
}
