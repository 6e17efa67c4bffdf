// Package reranker implements ports.Reranker with a cross-encoder behind an
// HTTP /rerank API. New selects one by the kind name the configuration
// carries:
//
//   - "none" (or ""): no reranker; New returns nil, nil and search keeps
//     the retrieval order.
//   - "http" (HTTP): POST {BaseURL}/rerank in one of two wire formats
//     (Flavor): "cohere", the shape shared by Cohere, Jina and vLLM, or
//     "tei", Hugging Face Text Embeddings Inference.
//
// Reranking is on the query path and optional: a failure is reported at
// once, without retries, so search can fall back to the retrieval order
// instead of keeping the user waiting.
package reranker

import (
	"strings"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Kinds of reranker New selects.
const (
	KindNone = "none"
	KindHTTP = "http"
)

// New returns the reranker of the given kind (case and surrounding space
// ignored): "none" or "" returns nil, nil; "http" an HTTP reranker
// configured by cfg.
func New(kind string, cfg Config) (ports.Reranker, error) {
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "", KindNone:
		return nil, nil
	case KindHTTP:
		h, err := NewHTTP(cfg)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return h, nil
	}
	return nil, core.Invalidf("unknown reranker %q: use none or http", kind)
}
