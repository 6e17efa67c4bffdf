package pgstore

import (
	"testing"

	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/pgtest"
	"github.com/climatesearch/climatesearch/test/storetest"
)

// TestWebhookClaims runs the shared queue's tests on a fresh database per
// test; every replica opens a store (a pool of its own) on it, as replicas
// on several machines do.
func TestWebhookClaims(t *testing.T) {
	storetest.RunClaims(t, func(t *testing.T) storetest.Replicas {
		url := pgtest.Shared(t).NewDB(t)
		return func(t *testing.T) ports.WebhookStore { return openT(t, url) }
	})
}
