// Package logevents publishes domain events to the log. It stands in the
// event port until webhook delivery lands; it is a real adapter, not a test
// double: operators read these lines.
package logevents

import (
	"context"

	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Publisher logs each event as one structured line.
type Publisher struct{ log *zap.Logger }

var _ ports.EventPublisher = (*Publisher)(nil)

// New returns a log publisher.
func New(log *zap.Logger) *Publisher { return &Publisher{log: log.Named("events")} }

// Publish logs the event.
func (p *Publisher) Publish(_ context.Context, ev core.Event) error {
	fields := []zap.Field{zap.String("type", string(ev.Type)), zap.String("catalog", string(ev.Catalog)), zap.Time("occurred_at", ev.OccurredAt)}
	if len(ev.Changed) > 0 {
		const show = 20
		ids := ev.Changed
		if len(ids) > show {
			ids = ids[:show]
		}
		fields = append(fields, zap.Int("changed_count", len(ev.Changed)), zap.Strings("changed", ids))
	}
	if ev.Error != "" {
		fields = append(fields, zap.String("error", ev.Error))
	}
	if ev.Type == core.EventCatalogChanged {
		p.log.Info("event", fields...)
	} else {
		p.log.Warn("event", fields...)
	}
	return nil
}
