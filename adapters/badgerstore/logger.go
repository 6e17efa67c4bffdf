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

func (l badgerLogger) Errorf(format string, args ...any)   { l.s.Errorf(trim(format), args...) }
func (l badgerLogger) Warningf(format string, args ...any) { l.s.Warnf(trim(format), args...) }
func (l badgerLogger) Infof(format string, args ...any)    { l.s.Debugf(trim(format), args...) }
func (l badgerLogger) Debugf(format string, args ...any)   { l.s.Debugf(trim(format), args...) }
