package badgerstore

import (
	"strings"

	"go.uber.org/zap"
)

// badgerLogger forwards Badger's log lines to zap. Badger narrates opening,
// replay and compaction at info level; those go to debug so a normal boot
// stays quiet, while warnings and errors keep their level.
type badgerLogger struct{ s *zap.SugaredLogger }

// trim drops the trailing newline many Badger format strings carry.
func trim(format string) string { return strings.TrimRight(format, "\n") }

func (l badgerLogger) Errorf(format string, args ...any) { l.s.Errorf(trim(format), args...) }

// Warningf keeps the level, except for Badger's minute-by-minute advice on
// its caches ("Block cache might be too small", with a histogram), which a
// scan of a large catalog through the deliberately small block cache
// (store.go) sets off every minute: it goes to debug.
func (l badgerLogger) Warningf(format string, args ...any) {
	if strings.HasPrefix(format, "%s might be too small") || strings.HasPrefix(format, "Cache life expectancy") {
		l.s.Debugf(trim(format), args...)
		return
	}
	l.s.Warnf(trim(format), args...)
}
func (l badgerLogger) Infof(format string, args ...any)  { l.s.Debugf(trim(format), args...) }
func (l badgerLogger) Debugf(format string, args ...any) { l.s.Debugf(trim(format), args...) }
