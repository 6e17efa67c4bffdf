package binary

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReleaseBuild runs task release's script for this machine's target:
// a static binary stamped with the version (and, from a git checkout, the
// revision), listed in SHA256SUMS with its hash.
func TestReleaseBuild(t *testing.T) {
	t.Parallel()
	dist := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command(filepath.Join(repoRoot, "deploy", "release.sh"), target)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "DIST="+dist, "VERSION=v9.8.7-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/release.sh %s: %v\n%s", target, err, out)
	}
	name := "climatesearch-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(dist, name)
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	if want := hex.EncodeToString(h[:]) + "  " + name + "\n"; string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("the release binary is dynamically linked (it has an interpreter)")
			}
		}
		f.Close()
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	var info struct {
		Version   string `json:"version"`
		Revision  string `json:"revision"`
		Time      string `json:"time"`
		GoVersion string `json:"go_version"`
	}
	if err != nil || json.Unmarshal(out, &info) != nil || info.Version != "v9.8.7-test" || !strings.HasPrefix(info.GoVersion, "go1.") {
		t.Fatalf("release binary version --json: %v %q", err, out)
	}
	git := exec.Command("git", "rev-parse", "HEAD")
	git.Dir = repoRoot
	if head, err := git.Output(); err == nil {
		if info.Revision != strings.TrimSpace(string(head)) || info.Time == "" {
			t.Fatalf("stamped revision %q at %q, want the checkout's %s", info.Revision, info.Time, head)
		}
		line, _ := exec.Command(bin, "version").Output()
		if want := "climatesearch v9.8.7-test (revision " + info.Revision[:12]; !strings.HasPrefix(string(line), want) {
			t.Errorf("version line %q, want it to start with %q", line, want)
		}
	}
}

// TestSystemdUnitVerifies: deploy/climatesearch.service passes
// systemd-analyze verify without a warning, and keeps its hardening.
func TestSystemdUnitVerifies(t *testing.T) {
	t.Parallel()
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is missing: install Debian's systemd package (test/suite.sh does)")
	}
	unit, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "climatesearch.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=climatesearch", "Environment=SERVICE_DATA_DIR=/var/lib/climatesearch",
		"NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "ExecStart=/usr/local/bin/climatesearch\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q", strings.TrimSpace(want))
		}
	}
	// verify checks that ExecStart exists: point it at the binary under test.
	verify := func(text string) (string, error) {
		dir := t.TempDir()
		p := filepath.Join(dir, "climatesearch.service")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool, "verify", p).CombinedOutput()
		var ours []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "climatesearch.service") {
				ours = append(ours, l)
			}
		}
		return strings.Join(ours, "\n"), err
	}
	local := strings.Replace(string(unit), "ExecStart=/usr/local/bin/climatesearch", "ExecStart="+binPath, 1)
	if out, err := verify(local); err != nil || out != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The check sees mistakes (so a clean answer means something).
	if out, _ := verify(strings.Replace(local, "NoNewPrivileges=", "NoNewPrivilege=", 1)); !strings.Contains(out, "NoNewPrivilege") {
		t.Errorf("systemd-analyze verify did not report a misspelt key: %q", out)
	}
}
