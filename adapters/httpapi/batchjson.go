package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/parallel"
)

// A batch's JSON is decoded on every core. One json.Decoder took about
// 150 ms of a 10,000-item batch's 1.2 s on one core while the other had
// nothing of the batch to do. The body is read whole (it was anyway: a
// Decoder buffers a whole value before decoding it), the "resources"
// array's items are found by a scan that only follows strings and
// brackets, and each core decodes a part of consecutive items with a
// Decoder of its own. Only a plain body takes that path; anything else,
// and any body whose fast decode fails, is decoded as before by one
// Decoder, so what a body means and the error a bad one gets are the
// Decoder's.

// decodeBatch decodes a ResourceBatch body strictly (no unknown fields, one
// JSON value).
func decodeBatch(body []byte) (core.ResourceBatch, error) {
	if b, ok := decodeBatchParts(body); ok {
		return b, nil
	}
	return decodeBatchWhole(body)
}

// errTrailing is the error of a body holding more than one JSON value.
var errTrailing = errors.New("body holds more than one JSON value")

// decodeBatchWhole decodes body with one Decoder.
func decodeBatchWhole(body []byte) (core.ResourceBatch, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var b core.ResourceBatch
	// Room for the items at once (the decoder fills it): grown an item at
	// a time, a batch of 10,000 allocated five times its slice. At most
	// MaxBatchResources items, 3 MB.
	b.Resources = make([]core.BatchItem, 0, min(core.MaxBatchResources, len(body)/batchItemBytes+1))
	if err := dec.Decode(&b); err != nil {
		return core.ResourceBatch{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return core.ResourceBatch{}, errTrailing
	}
	return b, nil
}

// decodeBatchParts decodes a plain body on every core: ok is false when body
// is not plain (see batchItems) or a part fails to decode.
func decodeBatchParts(body []byte) (core.ResourceBatch, bool) {
	rest, items, ok := batchItems(body)
	if !ok || len(items) < parallel.Above {
		return core.ResourceBatch{}, false
	}
	// The members other than the items, with the array replaced by null.
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	var b core.ResourceBatch
	if err := dec.Decode(&b); err != nil || dec.More() {
		return core.ResourceBatch{}, false
	}
	out := make([]core.BatchItem, len(items))
	var failed atomic.Bool
	parallel.Parts(len(items), func(from, to int) {
		// The part's items as a stream of arrays of runItems items each,
		// read by one Decoder: its buffer stays the size of a run instead
		// of growing to the part's (twice the part's bytes allocated).
		var runs []io.Reader
		for a := from; a < to; a += runItems {
			z := min(a+runItems, to)
			runs = append(runs, strings.NewReader("["), bytes.NewReader(body[items[a].start:items[z-1].end]), strings.NewReader("]"))
		}
		dec := json.NewDecoder(io.MultiReader(runs...))
		dec.DisallowUnknownFields()
		for a := from; a < to; a += runItems {
			z := min(a+runItems, to)
			// Decoded in place: the Decoder empties the slice and
			// appends within its capacity.
			run := out[a:a:z]
			if err := dec.Decode(&run); err != nil || len(run) != z-a {
				failed.Store(true)
				return
			}
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			failed.Store(true)
		}
	})
	if failed.Load() {
		return core.ResourceBatch{}, false
	}
	b.Resources = out
	return b, true
}

// runItems is how many items a Decoder of decodeBatchParts reads at a time.
const runItems = 64

// span is a byte range [start, end) of a body.
type span struct{ start, end int }

// batchItems finds the items of a plain body: an object whose members are
// "catalog", "version" and "resources" (spelt so, each at most once, in any
// order), resources an array, with nothing after it but white space. It
// returns the body with the array replaced by null (rest), and each item's
// span. It checks the structure of the object and of the array; the items
// and the other members' values are checked by the decoders that read them.
func batchItems(body []byte) (rest []byte, items []span, ok bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, nil, false
	}
	i = skipSpace(body, i+1)
	seen := map[string]bool{}
	arr := span{-1, -1}
	for {
		if i >= len(body) || body[i] != '"' {
			return nil, nil, false
		}
		end := stringEnd(body, i)
		if end < 0 {
			return nil, nil, false
		}
		key := string(body[i+1 : end-1])
		if (key != "catalog" && key != "version" && key != "resources") || seen[key] {
			return nil, nil, false // escapes, other spellings, repeats: the Decoder's rules
		}
		seen[key] = true
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, nil, false
		}
		i = skipSpace(body, i+1)
		if key == "resources" {
			if i >= len(body) || body[i] != '[' {
				return nil, nil, false
			}
			arr.start = i
			if items, i, ok = arrayItems(body, i); !ok {
				return nil, nil, false
			}
			arr.end = i
		} else if i = valueEnd(body, i); i < 0 {
			return nil, nil, false
		}
		i = skipSpace(body, i)
		if i >= len(body) {
			return nil, nil, false
		}
		if body[i] == '}' {
			break
		}
		if body[i] != ',' {
			return nil, nil, false
		}
		i = skipSpace(body, i+1)
	}
	if skipSpace(body, i+1) != len(body) || arr.start < 0 {
		return nil, nil, false
	}
	rest = make([]byte, 0, len(body)-(arr.end-arr.start)+4)
	rest = append(append(append(rest, body[:arr.start]...), "null"...), body[arr.end:]...)
	return rest, items, true
}

// arrayItems reads the array starting at body[i] ('['): its items' spans and
// the index after its ']'.
func arrayItems(body []byte, i int) ([]span, int, bool) {
	items := make([]span, 0, len(body)/batchItemBytes+1)
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == ']' {
		return items, i + 1, true
	}
	for {
		end := valueEnd(body, i)
		if end < 0 {
			return nil, 0, false
		}
		items = append(items, span{i, end})
		i = skipSpace(body, end)
		if i >= len(body) {
			return nil, 0, false
		}
		switch body[i] {
		case ']':
			return items, i + 1, true
		case ',':
			i = skipSpace(body, i+1)
		default:
			return nil, 0, false
		}
	}
}

// valueEnd is the index after the JSON value starting at body[i], or -1. It
// follows strings and brackets only: a value's own syntax is its decoder's
// to check.
func valueEnd(body []byte, i int) int {
	if i >= len(body) {
		return -1
	}
	switch body[i] {
	case '"':
		return stringEnd(body, i)
	case '{', '[':
		depth := 0
		for i < len(body) {
			switch body[i] {
			case '"':
				if i = stringEnd(body, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	// A number or a literal: up to the next delimiter.
	for i < len(body) {
		switch body[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// stringEnd is the index after the string starting at body[i] ('"'), or -1.
// A quote ends it unless an odd number of backslashes precede it.
func stringEnd(body []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(body[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i
		for k > 0 && body[k-1] == '\\' {
			k--
		}
		i++
		if (i-1-k)%2 == 0 {
			return i
		}
	}
}

// skipSpace is the index of the first byte at or after i that is not JSON
// white space.
func skipSpace(body []byte, i int) int {
	for i < len(body) {
		switch body[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// readBody reads a request's body whole, at most limit bytes (beyond it, an
// *http.MaxBytesError), into one buffer sized from Content-Length.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if n := c.Request.ContentLength; n > 0 {
		buf.Grow(int(min(n, limit)) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	return buf.Bytes(), err
}
