package doccommands

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// makeDryRun is what `make -n -B TARGET` would run in the repository: every
// recipe of TARGET's prerequisites, as if nothing were built yet.
func makeDryRun(t *testing.T, target string) string {
	out, err := exec.Command("make", "-C", repoDir(t), "--no-print-directory", "-n", "-B", target).CombinedOutput()
	require.NoError(t, err, "make -n -B %s:\n%s", target, out)
	return string(out)
}

// outputPattern finds what a compiler or linker line writes (-o FILE).
var outputPattern = regexp.MustCompile(`(?:^|\s)-o\s+(\S+)`)

// builtFiles are the files a dry run's recipes write with -o, relative to
// the repository (".tmp" suffixes of atomic links dropped).
func builtFiles(t *testing.T, dry string) []string {
	repo := repoDir(t)
	seen := map[string]bool{}
	for _, m := range outputPattern.FindAllStringSubmatch(dry, -1) {
		f := strings.Trim(m[1], `'"`)
		if rel, err := filepath.Rel(repo, f); err == nil && !strings.HasPrefix(rel, "..") {
			f = rel
		}
		seen[strings.TrimSuffix(f, ".tmp")] = true
	}
	var out []string
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// The README's first command must be quick on a fresh machine (issue 30):
// `make demo` builds the CLI (with the libraries it embeds) and the one
// sample app scripts/demo.sh profiles, on the host's ROCm, and nothing of the
// test suite: no ROCm root (debootstrap), no other sample app, no DuckDB
// engine. `make test` still builds all of it.
func TestDemoBuildsOnlyWhatItNeeds(t *testing.T) {
	demo := makeDryRun(t, "demo")
	for _, absent := range []string{"rocm-root.sh", "/build/rocm/", "debootstrap", "./cmd/rocprof-go-duckdb"} {
		for _, l := range strings.Split(demo, "\n") {
			if strings.Contains(l, absent) {
				t.Errorf("make demo must not build the test suite (%q), but would run:\n%s", absent, l)
				break
			}
		}
	}
	built := builtFiles(t, demo)
	require.Contains(t, built, "build/rocprof-go", "make demo builds the CLI")
	require.Contains(t, built, "build/testdata/multistream", "make demo builds the app scripts/demo.sh runs")
	for _, f := range built {
		ok := f == "build/rocprof-go" || f == "build/testdata/multistream" ||
			strings.HasPrefix(f, "build/lib/") || strings.HasPrefix(f, "build/vgpu/")
		if !ok {
			t.Errorf("make demo builds %s, which neither the CLI (with its native libraries in build/lib and build/vgpu) nor scripts/demo.sh needs", f)
		}
	}
	require.Contains(t, demo, "./scripts/demo.sh\n", "make demo runs the demo")

	test := makeDryRun(t, "test")
	for _, present := range []string{"debootstrap", "./cmd/rocprof-go-duckdb", "go mod download"} {
		require.Contains(t, test, present, "make test still installs and builds everything")
	}
	for _, name := range []string{"6.1", "6.4", "7.2"} {
		require.Contains(t, test, "rocm-root.sh build "+name+" ", "make test builds the ROCm %s root", name)
		require.Contains(t, test, "/build/rocm/"+name+"-apps/multistream", "make test builds the sample apps inside the %s root", name)
	}
	tested := builtFiles(t, test)
	for _, f := range built {
		require.Contains(t, tested, f, "make test builds everything make demo builds")
	}
	for _, f := range []string{"build/testdata/hip_calls_counts", "build/testdata/docapp", "build/testdata/gfx908/multistream",
		"build/test/shim/multistream", "build/vgpu-tests/pmc_golden", "build/testdata/roctx_legacy"} {
		require.Contains(t, tested, f, "make test builds the test apps")
	}
}
