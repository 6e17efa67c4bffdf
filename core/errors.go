package core

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorKind classifies failures so driver adapters can answer with the right
// status without knowing where the failure came from.
type ErrorKind int

const (
	KindInternal     ErrorKind = iota
	KindInvalid                // the request cannot be served as asked (400)
	KindNotFound               // no such resource (404)
	KindConflict               // a bare id matches several catalogs (409)
	KindUnavailable            // a dependency (the publisher, the store) failed (502/503)
	KindUnauthorized           // admin token missing or wrong (401)
	KindBusy                   // an ingest of the catalog is already running (409)
	KindTooLarge               // an upload exceeds a limit (413)
	KindLoading                // the index is still loading after a start (503, Retry-After)
)

// Error is a failure with a kind and a message a person can act on.
type Error struct {
	Kind ErrorKind
	Msg  string
	// Candidates lists the catalogs of an ambiguous bare id.
	Candidates []CatalogID
	// Problems lists, row by row, why a file cannot be loaded as mapped.
	Problems []FileProblem
	Err      error
}

func (e *Error) Error() string {
	switch {
	case e.Err != nil && e.Msg == "":
		return e.Err.Error()
	case e.Err != nil && e.Kind == KindUnavailable && !strings.Contains(e.Msg, e.Err.Error()):
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Invalidf reports a bad request.
func Invalidf(format string, args ...any) error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, args...)}
}

// NotFoundf reports a missing resource.
func NotFoundf(format string, args ...any) error {
	return &Error{Kind: KindNotFound, Msg: fmt.Sprintf(format, args...)}
}

// Unavailablef reports a failed dependency.
func Unavailablef(err error, format string, args ...any) error {
	return &Error{Kind: KindUnavailable, Msg: fmt.Sprintf(format, args...), Err: err}
}

// KindOf returns the kind of err; plain errors are internal.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
