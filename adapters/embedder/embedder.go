package embedder

import (
	"strings"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Kinds of embedder New selects.
const (
	KindHash   = "hash"
	KindOpenAI = "openai"
	KindNone   = "none"
)

// New returns the embedder of the given kind (case and surrounding space
// ignored): "hash" or "" (the offline default), "openai" (configured by
// cfg), or "none", which returns nil, nil: vector search is off. cfg is
// only read for "openai".
func New(kind string, cfg OpenAIConfig) (ports.Embedder, error) {
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "", KindHash:
		return NewHash(), nil
	case KindOpenAI:
		o, err := NewOpenAI(cfg)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return o, nil
	case KindNone:
		return nil, nil
	}
	return nil, core.Invalidf("unknown embedder %q: use hash, openai or none", kind)
}
