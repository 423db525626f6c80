package makedeps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

func repoDir(t *testing.T) string { return testsys.RepoRoot(t) }

// The shim (Go -buildmode=c-shared) is built from every Go package it
// imports: a change in internal/counters, internal/aql or the architecture
// data it embeds rebuilds it, as a change in internal/hsa does. Before, its
// rule listed only internal/hsa's files and the shim embedded in the CLI
// kept the old counter code. The shim is placed in a scratch BUILD with a
// time in the future, so that only the pretended change can make it stale.
func TestShimRebuildsWhenAnImportedPackageChanges(t *testing.T) {
	repo := repoDir(t)
	build := t.TempDir()
	shim := filepath.Join(build, "lib", "librocprof-go-shim.so")
	require.NoError(t, os.MkdirAll(filepath.Dir(shim), 0o755))
	require.NoError(t, os.WriteFile(shim, nil, 0o644))
	future := time.Now().Add(24 * time.Hour)
	require.NoError(t, os.Chtimes(shim, future, future))

	dryRun := func(changed string) string {
		args := []string{"-C", repo, "--no-print-directory", "-n", "BUILD=" + build}
		if changed != "" {
			args = append(args, "-W", changed)
		}
		out, err := exec.Command("make", append(args, shim)...).CombinedOutput()
		require.NoError(t, err, "make %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	const rebuild = "-buildmode=c-shared"
	require.NotContains(t, dryRun(""), rebuild, "the scratch shim is up to date")
	for _, f := range []string{
		"internal/hsa/pmc.go",         // the shim's own package
		"internal/counters/plan.go",   // the counter database
		"internal/aql/event.go",       // the packet builders
		"internal/hsa/request/pmc.go", // what the shim is asked for
		"configs/gpu/counters.json",   // data embedded by configs/gpu
		"go.sum",                      // another module's version
	} {
		require.Contains(t, dryRun(f), rebuild, "a change in %s rebuilds the shim", f)
	}
}

// make test-rocprofiler-compute takes rocprofiler-compute from the shared
// folder beside the checkout by default (SHARED, ../shared:
// clients/rocprofiler-compute-<commit>.tar.gz), unpacked into the build
// tree, never the repository; no path of one machine. Without the shared
// folder it fails, naming SHARED and ROCPROF_COMPUTE_SRC; another tarball
// may be given.
func TestRocprofComputeSourceFromTheSharedFolder(t *testing.T) {
	repo := repoDir(t)
	src := func(vars ...string) (string, error) {
		args := append([]string{"-C", repo, "--no-print-directory", "BUILD=" + t.TempDir()}, vars...)
		out, err := exec.Command("make", append(args, "rocprofcompute-src")...).CombinedOutput()
		return string(out), err
	}
	build := t.TempDir()
	out, err := src("BUILD=" + build)
	require.NoError(t, err, "%s", out)
	require.Contains(t, out, "rocprofiler-compute: ../shared/clients/rocprofiler-compute-1b1610fc2b2a.tar.gz")
	require.FileExists(t, filepath.Join(build, "rocprofiler-compute", "src", "rocprof-compute"))
	require.FileExists(t, filepath.Join(build, "rocprofiler-compute", "LICENSE"))

	out, err = src("SHARED=" + filepath.Join(t.TempDir(), "no-shared"))
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "make test-rocprofiler-compute: FAIL: no rocprofiler-compute source at ROCPROF_COMPUTE_SRC=")
	require.Contains(t, out, "put the shared folder beside the checkout, or give SHARED=DIR")

	// Another tarball: its top directory is stripped.
	other := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(other, "rocprofiler-compute-x", "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "rocprofiler-compute-x", "src", "rocprof-compute"), []byte("#!/usr/bin/env python3\n"), 0o755))
	tarball := filepath.Join(other, "client.tar.gz")
	tarOut, err := exec.Command("tar", "-czf", tarball, "-C", other, "rocprofiler-compute-x").CombinedOutput()
	require.NoError(t, err, "%s", tarOut)
	build = t.TempDir()
	out, err = src("BUILD="+build, "ROCPROF_COMPUTE_SRC="+tarball)
	require.NoError(t, err, "%s", out)
	require.FileExists(t, filepath.Join(build, "rocprofiler-compute", "src", "rocprof-compute"))
}
