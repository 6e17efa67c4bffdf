// Package buildinfo says which build of climatesearch is running: the
// module version, the VCS revision and time, and the Go version, read from
// the binary (runtime/debug.ReadBuildInfo). A release build stamps its
// version with -ldflags "-X github.com/climatesearch/climatesearch/cmd/climatesearch/buildinfo.version=v1.2.3"
// (task release); otherwise the version is the module's as the go command
// recorded it (a pseudo-version from the VCS, or "(devel)").
//
// It imports only the standard library, so the binary passes Get() (or its
// fields) to whatever needs it: the MCP serverInfo (mcpserver.Deps.Version),
// the build-info gauge of /metrics (Labels).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at link time by release builds.
var version string

// Info describes the running binary.
type Info struct {
	// Module is the main module's path.
	Module string `json:"module"`
	// Version is the release version (-ldflags) or the module version the
	// go command recorded; "(devel)" when neither is known.
	Version string `json:"version"`
	// Revision and Time are the VCS commit and its time; Modified is true
	// when the work tree had uncommitted changes.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go_version"`
}

// Get reads the build information of the running binary.
func Get() Info {
	i := Info{Module: "github.com/climatesearch/climatesearch", Version: "(devel)", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			i.Module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			i.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Revision = s.Value
			case "vcs.time":
				i.Time = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		i.Version = version
	}
	return i
}

// String is the one line `climatesearch version` prints, e.g.
// "climatesearch v1.2.0 (revision 1a2b3c4d5e6f, 2026-11-24T03:00:00Z) go1.26.0".
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "climatesearch %s", i.Version)
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if i.Modified {
			rev += "-modified"
		}
		fmt.Fprintf(&b, " (revision %s", rev)
		if i.Time != "" {
			fmt.Fprintf(&b, ", %s", i.Time)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s", i.GoVersion)
	return b.String()
}

// Labels are the labels of a build-info gauge (climatesearch_build_info 1):
// version, revision, goversion.
func (i Info) Labels() map[string]string {
	return map[string]string{"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion}
}
