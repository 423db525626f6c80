package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// summary and compare take a run's directory as the run left it: the
// default format (ROCpd), found through run.json; and a CSV directory that
// an earlier run also wrote into counts only the run its run.json names.
func TestSummaryAndCompareReadRunDirectories(t *testing.T) {
	libs := builtLibs(t)
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "perfgate"))
	require.NoError(t, err)
	record := func(dir string, opts ...string) {
		args := append(append([]string{"--virtual-gpu", "--kernel-trace", "--hip-trace", "-d", dir}, opts...), "--", app, "2")
		cmd := exec.Command(cliBinary, args...)
		cmd.Env = append(os.Environ(), libs)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	def := t.TempDir()
	record(def)
	r := runCLI(t, nil, "summary", "-i", def)
	require.Equal(t, 0, r.code, r.stderr)
	// perfgate 2: two saxpy dispatches per round.
	require.Regexp(t, `(?m)^saxpy\(float, float const\*, float\*, int\) +\| +4 \|`, r.stdout)

	csv := t.TempDir()
	record(csv, "-f", "csv")
	record(csv, "-f", "csv") // a second run into the same directory
	r = runCLI(t, nil, "summary", "-i", csv)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^hipLaunchKernel +\| +6 \|`, r.stdout, "the last run's 6 launches, not both runs' 12")

	r = runCLI(t, nil, "compare", def, csv)
	require.Equal(t, 0, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Regexp(t, regexp.MustCompile(`(?m)^insufficient data +KERNEL_DISPATCH +saxpy.* 2 → 2 calls$`), r.stdout, "one run of 2 dispatches a side: too few to decide")
}
