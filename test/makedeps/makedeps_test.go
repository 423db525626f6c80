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
