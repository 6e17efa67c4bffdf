// Package embedder implements ports.Embedder: it turns resource texts and
// search queries into ports.EmbeddingDim-dimensional (320), L2-normalised
// vectors. New selects one by the kind name the configuration carries:
//
//   - "hash" (Hash, the offline default) hashes character n-grams into 320
//     buckets. It needs no model, no network and no state.
//   - "openai" (OpenAI) asks any server that speaks the OpenAI
//     /v1/embeddings API: vLLM, llama.cpp, Ollama, Text Embeddings
//     Inference, or OpenAI itself.
//   - "none" turns vector search off: New returns a nil Embedder.
//
// # What the hash embedder can and cannot do
//
// Hash is lexical, not semantic: two texts are close when they share
// spelling. That helps with typos (glasull, glassull), inflections (skiva,
// skivor), compounds that share a part (glasull, mineralull) and Danish
// spellings of Swedish words (beton, betong), which a word index misses.
// It does not know that isolering and insulation, or betong and concrete,
// mean the same thing: synonyms and translations need a real model behind
// "openai". Scores are only comparable between vectors of one embedder.
//
// # Zero vectors
//
// A text with no letters or digits (empty, only punctuation) gets a zero
// vector from every embedder here, without asking a server. A zero vector is
// not normalised and has no direction: search must treat it as no vector
// (skip the vector leg, do not index it), never as a match of score 0.
//
// # IDs
//
// An embedder's ID names the model and every setting that changes vectors.
// Vectors stored under one ID must be re-embedded, never compared, when the
// ID changes.
package embedder
