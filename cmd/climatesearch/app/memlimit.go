package app

import (
	"errors"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/config"
)

// SetMemoryLimit gives the Go heap the soft limit of SERVICE_MEMORY_LIMIT
// and returns it (0: none). Near the limit the garbage collector runs more
// often instead of letting the heap grow to twice what is live, which is
// what a container's memory limit needs: with the default GOGC a large
// ingest's garbage alone can take the process past it and get it killed
// (docs/PERFORMANCE.md, "The million through the binary"). "auto" reads the
// cgroup's limit (automemlimit handles cgroup v1 and v2) and takes 90 % of
// it, leaving room for what is not Go heap (badger's mapped files, stacks);
// without a cgroup limit it sets none. A GOMEMLIMIT in the environment,
// which the runtime has already applied, wins.
func SetMemoryLimit(cfg config.Config, log *zap.Logger) int64 {
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		limit := debug.SetMemoryLimit(-1)
		log.Info("memory limit from GOMEMLIMIT", zap.String("GOMEMLIMIT", v), zap.Int64("bytes", limit))
		return limit
	}
	switch cfg.MemoryLimit {
	case 0:
		return 0
	case config.MemoryAuto:
		limit, err := memlimit.FromCgroup()
		if err != nil {
			if !errors.Is(err, memlimit.ErrNoLimit) && !errors.Is(err, memlimit.ErrNoCgroup) {
				log.Warn("memory limit: cannot read the cgroup's limit; none set", zap.Error(err))
			}
			return 0
		}
		n := int64(float64(limit) * 0.9)
		debug.SetMemoryLimit(n)
		log.Info("memory limit: 90% of the cgroup's", zap.Uint64("cgroup_bytes", limit), zap.Int64("bytes", n))
		return n
	default:
		debug.SetMemoryLimit(cfg.MemoryLimit)
		log.Info("memory limit", zap.Int64("bytes", cfg.MemoryLimit))
		return cfg.MemoryLimit
	}
}
