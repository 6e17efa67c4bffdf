package embedder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Defaults applied to a zero OpenAIConfig field.
const (
	DefaultBatchSize = 64
	DefaultTimeout   = 10 * time.Second
	DefaultRetries   = 2
)

const (
	// maxBodyBytes caps a response: 64 vectors of 320 floats are ~0.5 MB of JSON.
	maxBodyBytes = 32 << 20
	// maxRetryAfter caps a server's Retry-After, so a misconfigured server
	// cannot park an ingest for an hour.
	maxRetryAfter = time.Minute
)

// backoffBase is the first retry delay; each retry doubles it, with jitter.
var backoffBase = 250 * time.Millisecond

// OpenAIConfig tells the OpenAI embedder which server and model to use.
type OpenAIConfig struct {
	// BaseURL of the server, with or without the trailing /v1:
	// http://localhost:8000 and http://localhost:8000/v1 both POST to
	// http://localhost:8000/v1/embeddings (a full .../v1/embeddings works too).
	BaseURL string
	// Model is sent as "model" and is part of the ID. Required.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Dimensions is sent as "dimensions". 0 means ports.EmbeddingDim, the
	// only value accepted: the vector index has one shape.
	Dimensions int
	// BatchSize is the most texts sent in one request; 0 means DefaultBatchSize.
	BatchSize int
	// Timeout bounds each request (one attempt); 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how often a failed request is tried again: after a network
	// error or timeout, a 429 (honouring Retry-After) or a 5xx, never after
	// another 4xx. 0 means DefaultRetries; negative means no retries.
	Retries int
	// HTTPClient is used for every request; nil means http.DefaultClient
	// (which drops Authorization on a redirect to another host).
	HTTPClient *http.Client
	// QueryPrefix and DocumentPrefix are put before queries and documents,
	// for models trained with instructions, e.g. "query: " and "passage: "
	// for E5, "search_query: " and "search_document: " for nomic-embed-text.
	QueryPrefix, DocumentPrefix string
}

// OpenAI embeds with a server speaking the OpenAI embeddings API. Batches
// are sent one after another, not in parallel, to keep a small local server
// responsive for queries during an ingest. Safe for concurrent use.
type OpenAI struct {
	cfg     OpenAIConfig
	url     string
	id      string
	client  *http.Client
	retries int
}

// NewOpenAI validates cfg and returns the embedder. It does not contact the
// server.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	u, err := url.Parse(cfg.BaseURL)
	if cfg.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, core.Invalidf("openai embedder: base URL %q is not an http(s) URL such as http://localhost:8000/v1", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, core.Invalidf("openai embedder: a model name is required")
	}
	if cfg.Dimensions == 0 {
		cfg.Dimensions = ports.EmbeddingDim
	}
	if cfg.Dimensions != ports.EmbeddingDim {
		return nil, core.Invalidf("openai embedder: dimensions must be %d, the size of the service's vectors, not %d", ports.EmbeddingDim, cfg.Dimensions)
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	o := &OpenAI{cfg: cfg, url: embeddingsURL(cfg.BaseURL), client: cfg.HTTPClient, retries: cfg.Retries}
	if o.client == nil {
		o.client = http.DefaultClient
	}
	switch {
	case o.retries == 0:
		o.retries = DefaultRetries
	case o.retries < 0:
		o.retries = 0
	}
	o.id = "openai:" + cfg.Model + ":" + strconv.Itoa(cfg.Dimensions)
	if cfg.QueryPrefix != "" || cfg.DocumentPrefix != "" {
		// Prefixes change the vectors, so they are part of the ID.
		h := fnv.New32a()
		h.Write([]byte(cfg.QueryPrefix + "\x00" + cfg.DocumentPrefix))
		o.id += fmt.Sprintf(":p%08x", h.Sum32())
	}
	return o, nil
}

func embeddingsURL(base string) string {
	base = strings.TrimRight(base, "/")
	base = strings.TrimSuffix(base, "/embeddings")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/v1/embeddings"
}

// ID implements ports.Embedder: "openai:<model>:320", followed by
// ":p<hash>" when prefixes are set.
func (o *OpenAI) ID() string { return o.id }

// Dim implements ports.Embedder.
func (o *OpenAI) Dim() int { return o.cfg.Dimensions }

// EmbedQuery implements ports.Embedder.
func (o *OpenAI) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := o.embed(ctx, []string{text}, o.cfg.QueryPrefix)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// EmbedDocuments implements ports.Embedder.
func (o *OpenAI) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return o.embed(ctx, texts, o.cfg.DocumentPrefix)
}

func (o *OpenAI) embed(ctx context.Context, texts []string, prefix string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var at []int
	var inputs []string
	for i, t := range texts {
		// Servers refuse or make up vectors for empty input; these get the
		// zero vector the package promises.
		if !hasContent(t) {
			out[i] = make([]float32, o.cfg.Dimensions)
			continue
		}
		at = append(at, i)
		inputs = append(inputs, prefix+t)
	}
	for start := 0; start < len(inputs); start += o.cfg.BatchSize {
		end := min(start+o.cfg.BatchSize, len(inputs))
		vs, err := o.batch(ctx, inputs[start:end])
		if err != nil {
			return nil, core.Unavailablef(err, "embedder %s", o.id)
		}
		for k, v := range vs {
			out[at[start+k]] = v
		}
	}
	return out, nil
}

func hasContent(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// retryable marks a failure worth another attempt; after is the server's
// Retry-After, if it sent one.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// batch embeds inputs in one request, retrying as configured.
func (o *OpenAI) batch(ctx context.Context, inputs []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: o.cfg.Model, Input: inputs, Dimensions: o.cfg.Dimensions, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		vs, err := o.post(ctx, body, len(inputs))
		if err == nil {
			return vs, nil
		}
		var r *retryable
		if !errors.As(err, &r) || ctx.Err() != nil {
			return nil, err
		}
		if attempt >= o.retries {
			if attempt == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
		}
		wait := jitter(backoffBase << attempt)
		if r.after > wait {
			wait = r.after
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return nil, fmt.Errorf("%w (no time left for a retry in %s)", err, wait.Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (then %w while waiting to retry)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// jitter spreads d over [d/2, d), so clients that failed together do not
// retry together.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// post sends one request and checks the answer.
func (o *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	rctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", o.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		var ue *url.Error // it repeats the method and URL
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &retryable{err: fmt.Errorf("POST %s: %w", o.url, o.cause(ctx, rctx, err))}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		err := fmt.Errorf("POST %s: HTTP %s%s", o.url, resp.Status, serverMessage(snippet))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, &retryable{err: err, after: retryAfter(resp.Header.Get("Retry-After"))}
		}
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, &retryable{err: fmt.Errorf("POST %s: reading the answer: %w", o.url, o.cause(ctx, rctx, err))}
	}
	if len(raw) > maxBodyBytes {
		return nil, fmt.Errorf("POST %s: answer exceeds %d bytes", o.url, maxBodyBytes)
	}
	var er embeddingResponse
	if err := json.Unmarshal(raw, &er); err != nil {
		return nil, fmt.Errorf("POST %s: answer is not an OpenAI embeddings response: %w", o.url, err)
	}
	return o.vectors(er, n)
}

// vectors orders the answer by index and normalises it, refusing anything
// that would put wrong vectors in the index.
func (o *OpenAI) vectors(er embeddingResponse, n int) ([][]float32, error) {
	if len(er.Data) != n {
		return nil, fmt.Errorf("embedding server returned %d vectors for %d inputs", len(er.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range er.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || out[idx] != nil {
			return nil, fmt.Errorf("embedding server returned a missing, repeated or out-of-range index %d for %d inputs", idx, n)
		}
		if len(d.Embedding) != o.cfg.Dimensions {
			return nil, fmt.Errorf("embedding server returned %d-dimensional vectors; configure a model that supports dimensions=%d", len(d.Embedding), o.cfg.Dimensions)
		}
		var norm float64
		for _, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("embedding server returned a non-finite value in the vector of input %d", idx)
			}
			norm += x * x
		}
		// Servers do not always normalise; a zero vector has no direction.
		if norm == 0 || math.IsInf(norm, 0) {
			return nil, fmt.Errorf("embedding server returned a vector of length %g for input %d", math.Sqrt(norm), idx)
		}
		out[idx] = normalized(d.Embedding)
	}
	return out, nil
}

// cause names a request's own timeout as such; a cancellation by the caller
// is passed on unchanged.
func (o *OpenAI) cause(parent, rctx context.Context, err error) error {
	if parent.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s: %w", o.cfg.Timeout, context.DeadlineExceeded)
	}
	return err
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(h); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	}
	return max(0, min(d, maxRetryAfter))
}

// serverMessage extracts the reason from an error body. OpenAI and vLLM
// answer {"error":{"message":...}} or {"message":...}; TEI {"error":"..."};
// anything else is quoted as it came.
func serverMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	msg := ""
	if json.Unmarshal(b, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			msg = s
		default:
			msg = e.Message
		}
	}
	if msg == "" {
		msg = string(b)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" || !utf8.ValidString(msg) {
		return ""
	}
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "..."
	}
	return ": " + msg
}
