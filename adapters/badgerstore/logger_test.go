package badgerstore

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestBadgerCacheAdviceIsDebug: Badger's cache advice goes to debug, its
// other warnings stay warnings, its info narration goes to debug.
func TestBadgerCacheAdviceIsDebug(t *testing.T) {
	core, seen := observer.New(zapcore.DebugLevel)
	l := badgerLogger{zap.New(core).Sugar()}
	l.Warningf("%s might be too small. Metrics: %s\n", "Block cache", "hit: 1 miss: 9")
	l.Warningf("Cache life expectancy (in seconds): %+v\n", "histogram")
	l.Warningf("Truncate Needed. File %s size: %d Endoffset: %d\n", "000001.vlog", 10, 5)
	l.Infof("Replaying file id: %d at offset: %d\n", 1, 0)
	want := []zapcore.Level{zapcore.DebugLevel, zapcore.DebugLevel, zapcore.WarnLevel, zapcore.DebugLevel}
	got := seen.All()
	if len(got) != len(want) {
		t.Fatalf("%d entries", len(got))
	}
	for i, e := range got {
		if e.Level != want[i] {
			t.Errorf("%q at %v, want %v", e.Message, e.Level, want[i])
		}
	}
	if got[0].Message != "Block cache might be too small. Metrics: hit: 1 miss: 9" {
		t.Errorf("message %q", got[0].Message)
	}
}
