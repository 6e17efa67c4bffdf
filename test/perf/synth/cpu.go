package synth

import (
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time the process has used: the
// benchmarks' cpu-ms/op, steadier than wall time on a shared machine.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
