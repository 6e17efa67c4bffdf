package core

import "context"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the HTTP request it serves,
// so log lines written further in (the core logs through slog with the
// context) name the request.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id ctx carries, "" when none.
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
