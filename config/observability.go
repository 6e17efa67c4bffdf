package config

import (
	"fmt"
	"net"
	"strconv"
)

// validateObservability checks SERVICE_METRICS_ADDR and SERVICE_PPROF_ADDR.
func (c Config) validateObservability() error {
	for _, s := range []struct{ env, v string }{{"SERVICE_METRICS_ADDR", c.MetricsAddr}, {"SERVICE_PPROF_ADDR", c.PprofAddr}} {
		if s.v == "" {
			continue
		}
		_, port, err := net.SplitHostPort(s.v)
		if err != nil {
			return fmt.Errorf("invalid %s %q: want host:port such as 127.0.0.1:9090", c.name(s.env), s.v)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			return fmt.Errorf("invalid %s %q: port must be 0-65535", c.name(s.env), s.v)
		}
	}
	return nil
}

// PprofListen is where net/http/pprof listens: SERVICE_PPROF_ADDR, with
// an empty host (":6060") bound to loopback only; "" when off. A host
// given explicitly is taken as given.
func (c Config) PprofListen() string {
	if c.PprofAddr == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(c.PprofAddr)
	if err != nil {
		return c.PprofAddr
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
