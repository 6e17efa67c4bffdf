package prommetrics

import "github.com/prometheus/client_golang/prometheus"

// SetBuildInfo registers climatesearch_build_info{version, revision,
// goversion} = 1: which build serves, for dashboards and alerts on a
// rollout (the binary passes cmd/climatesearch/buildinfo.Get()). Call it
// once.
func (m *Metrics) SetBuildInfo(version, revision, goVersion string) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "Always 1; the labels name the build: version, VCS revision, Go version.",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(version, revision, goVersion).Set(1)
	m.reg.MustRegister(g)
}
