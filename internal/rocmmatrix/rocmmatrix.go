// Package rocmmatrix describes the ROCm runtimes rocprof-go is tested on and
// runs programs on each of them: the host's own ROCm 5.2.3 (Debian bookworm)
// and the Debian roots of configs/rocm-matrix.tsv (ROCm 6.1, 6.4, 7.2),
// built by scripts/rocm-root.sh into build/rocm/<name>, with the sample apps
// compiled by each runtime's own hipcc into build/rocm/<name>-apps (see
// docs/rocm-matrix.md). Tests use it to run the same checks on every
// runtime; it is test support, not part of the CLI.
package rocmmatrix

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// HostName is the matrix entry of the host's own ROCm (no root).
const HostName = "5.2"

// Runtime is one ROCm runtime of the matrix.
type Runtime struct {
	Name string // "5.2", "6.1", "6.4", "7.2"
	// Root is the root file system the runtime lives in, "" for the host.
	Root string
	// Apps holds the sample apps, HSA drivers and the minimal HSA_TOOLS_LIB
	// tool built against this runtime (testdata/apps, vgpu/testdriver).
	Apps string
	// Tool is the minimal intercepting HSA_TOOLS_LIB tool.
	Tool string

	repo  string
	build string
	binds []string
}

// WithBinds returns the runtime with more host directories visible at the
// same paths inside its root (the repository, /tmp, /dev, /proc and /sys
// always are).
func (r Runtime) WithBinds(paths ...string) Runtime {
	r.binds = append(append([]string(nil), r.binds...), paths...)
	return r
}

// archSupport lists the architectures each runtime's ROCR accepts, from
// the ISA tables of its sources: ROCR 5.2.3 knows no gfx94x or gfx11.
var archSupport = map[string][]string{
	"5.2": {"gfx90a", "gfx908", "gfx906", "gfx900", "gfx1030"},
	"*":   {"gfx90a", "gfx908", "gfx906", "gfx900", "gfx1030", "gfx942", "gfx1100"},
}

// AllArchs are the architectures the virtual GPU emulates.
var AllArchs = archSupport["*"]

// Archs are the emulated architectures this runtime accepts.
func (r Runtime) Archs() []string {
	if a, ok := archSupport[r.Name]; ok {
		return a
	}
	return archSupport["*"]
}

// Ready lists the matrix like Runtimes and checks that every runtime is
// built (Check), binding the build directory into the roots when it lies
// outside the repository (ROCPROF_GO_BUILD), which the roots see anyway.
func Ready(repo, build string) ([]Runtime, error) {
	rs, err := Runtimes(repo, build)
	if err != nil {
		return nil, err
	}
	for i, rt := range rs {
		if err := rt.Check(); err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(rt.repo, rt.build); err != nil || strings.HasPrefix(rel, "..") {
			rs[i] = rt.WithBinds(rt.build)
		}
	}
	return rs, nil
}

// Build is the (absolute) build directory the runtime was listed from.
func (r Runtime) Build() string { return r.build }

// Runtimes lists the matrix: the host first, then the roots in the order
// of configs/rocm-matrix.tsv. repo is the repository's top directory,
// build its build directory.
func Runtimes(repo, build string) ([]Runtime, error) {
	// Roots are entered by path (scripts/rocm-root.sh changes into them), so
	// every path handed out is absolute, whatever the caller's directory.
	repo, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	if build, err = filepath.Abs(build); err != nil {
		return nil, err
	}
	names, err := rootNames(filepath.Join(repo, "configs", "rocm-matrix.tsv"))
	if err != nil {
		return nil, err
	}
	rs := []Runtime{{
		Name:  HostName,
		build: build,
		Apps:  filepath.Join(build, "testdata"),
		Tool:  filepath.Join(build, "vgpu-tests", "libvgpu_testtool.so"),
		repo:  repo,
	}}
	for _, n := range names {
		apps := filepath.Join(build, "rocm", n+"-apps")
		rs = append(rs, Runtime{Name: n, Root: filepath.Join(build, "rocm", n), Apps: apps,
			Tool: filepath.Join(apps, "libvgpu_testtool.so"), repo: repo, build: build})
	}
	return rs, nil
}

// rootNames reads the matrix entries (first column, "common" excepted).
func rootNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := strings.Fields(line)[0]
		if name != "common" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return names[i] < names[j] })
	return names, sc.Err()
}

// Check reports what is missing for running tests on this runtime, with
// the command that builds it.
func (r Runtime) Check() error {
	for _, p := range []string{r.Apps, r.Tool} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("ROCm %s: %s is missing: build the ROCm matrix with `make rocm-roots rocm-testapps` (as root; docs/rocm-matrix.md)", r.Name, p)
		}
	}
	if r.Root != "" {
		if _, err := os.Stat(filepath.Join(r.Root, ".rocm-root-stamp")); err != nil {
			return fmt.Errorf("ROCm %s: no root in %s: build it with `make rocm-roots` (as root)", r.Name, r.Root)
		}
	}
	return nil
}

// Command prepares prog to run on this runtime: directly on the host, or
// inside the root through scripts/rocm-root.sh, which keeps the caller's
// environment (set Env on the result) and working directory.
func (r Runtime) Command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	if r.Root == "" {
		return exec.CommandContext(ctx, prog, args...)
	}
	full := []string{"run", r.Root}
	for _, b := range r.binds {
		full = append(full, "--bind", b)
	}
	full = append(append(full, "--", prog), args...)
	return exec.CommandContext(ctx, filepath.Join(r.repo, "scripts", "rocm-root.sh"), full...)
}

// HIPMajor is the major version of the runtime's HIP (libamdhip64.so.N).
func (r Runtime) HIPMajor() (int, error) {
	dir := filepath.Join("/", r.Root, "usr", "lib", "x86_64-linux-gnu")
	libs, _ := filepath.Glob(filepath.Join(dir, "libamdhip64.so.[0-9]"))
	if len(libs) != 1 {
		return 0, fmt.Errorf("ROCm %s: want one libamdhip64.so.N in %s, found %v", r.Name, dir, libs)
	}
	return int(libs[0][len(libs[0])-1] - '0'), nil
}

// Versions returns the installed versions of the runtime's packages, one
// "package version" per line, for test logs.
func (r Runtime) Versions() (string, error) {
	if r.Root == "" {
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Package} ${Version}\n",
			"libhsa-runtime64-1", "libhsakmt1", "libamdhip64-5", "hipcc", "rocminfo").Output()
		return string(out), err
	}
	out, err := exec.Command(filepath.Join(r.repo, "scripts", "rocm-root.sh"), "versions", r.Root).Output()
	return string(out), err
}
