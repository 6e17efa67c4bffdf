package logevents

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/climatesearch/climatesearch/core"
)

func TestEventsBecomeOneStructuredLineEach(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	p := New(zap.New(obs))
	changed := make([]string, 25)
	for i := range changed {
		changed[i] = "national:" + string(rune('a'+i))
	}
	ctx := context.Background()
	_ = p.Publish(ctx, core.Event{Type: core.EventCatalogChanged, Catalog: core.National, OccurredAt: time.Now(), Changed: changed})
	_ = p.Publish(ctx, core.Event{Type: core.EventCatalogUnreachable, Catalog: core.National, OccurredAt: time.Now(), Error: "json: timeout"})
	entries := logs.All()
	if len(entries) != 2 {
		t.Fatalf("%d lines", len(entries))
	}
	c := entries[0].ContextMap()
	if entries[0].Level != zapcore.InfoLevel || c["type"] != "catalog.changed" || c["changed_count"] != int64(25) || len(c["changed"].([]interface{})) != 20 {
		t.Fatalf("changed line: %v %v", entries[0].Level, c)
	}
	u := entries[1].ContextMap()
	if entries[1].Level != zapcore.WarnLevel || u["type"] != "catalog.unreachable" || u["error"] != "json: timeout" {
		t.Fatalf("unreachable line: %v %v", entries[1].Level, u)
	}
}
