package pgstore

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/zap"

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

// BenchmarkWebhookReplicas: deliveries/s of 1, 2 and 3 webhooks.Service,
// each on a pool of its own, over one database, to 1 and 4 destinations.
//
//	go test -run '^$' -bench WebhookReplicas -benchtime 2000x ./adapters/pgstore/
func BenchmarkWebhookReplicas(b *testing.B) {
	for _, dests := range []int{1, 4} {
		for _, n := range []int{1, 2, 3} {
			b.Run(fmt.Sprintf("destinations-%d/replicas-%d", dests, n), func(b *testing.B) {
				url := pgtest.Shared(b).NewDB(b)
				storetest.BenchReplicas(b, func(b *testing.B) ports.WebhookStore {
					s, err := Open(context.Background(), url, zap.NewNop())
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = s.Close() })
					return s
				}, n, dests)
			})
		}
	}
}
