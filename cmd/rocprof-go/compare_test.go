package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

// compareSides writes n databases per side; the new side's gemm takes
// scale times as long, and every run jitters by a few ns.
func compareSides(t *testing.T, dir string, n int, scale float64) (base, next []string) {
	mk := func(name string, i int, scale float64) string {
		p := rocpdtest.Sample(0)
		for j := range p.Dispatches {
			d := p.Dispatches[j]
			f := 1.0
			if strings.HasPrefix(d.Kernel, "gemm") {
				f = scale
			}
			p.Dispatches[j].End = d.Start + int64(float64(d.End-d.Start)*f) + int64(i)
		}
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, rocpdtest.Write(path, p))
		return path
	}
	for i := range n {
		base = append(base, mk(fmt.Sprintf("base%d.db", i), i, 1))
		next = append(next, mk(fmt.Sprintf("new%d.db", i), i, scale))
	}
	return base, next
}

func TestCompareCommandExitStatus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sides") // beside it: another directory of runs
	base, same := compareSides(t, dir, 8, 1)
	compareSides(t, filepath.Join(filepath.Dir(dir), "other"), 1, 1)
	_, slow := compareSides(t, t.TempDir(), 8, 1.2)

	args := func(opts []string, b, n []string) []string {
		return append(append(append(append([]string{"compare"}, opts...), b...), "--"), n...)
	}
	r := runCLI(t, nil, args(nil, base, same)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "0 regression(s)")
	require.Contains(t, r.stdout, "8 → 8 runs")

	r = runCLI(t, nil, args([]string{"--format", "markdown", "--threshold", "10%"}, base, slow)...)
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stdout, "| **regression** | KERNEL_DISPATCH | `gemm(float*, float*, float*)` | grid 1024x1x1 block 256x1x1 lds 512 scratch 0 |")

	out := filepath.Join(dir, "report.xml")
	r = runCLI(t, nil, args([]string{"--format", "junit", "-o", out, "--metric", "p95"}, base, slow)...)
	require.Equal(t, 3, r.code, r.stderr)
	require.FileExists(t, out)

	r = runCLI(t, nil, args([]string{"--threshold", "25%", "--format", "json"}, base, slow)...)
	require.Equal(t, 0, r.code, r.stderr)
	r = runCLI(t, nil, args([]string{"--min-delta", "5ms"}, base, slow)...)
	require.Equal(t, 0, r.code, r.stderr)

	// One run per side: calls pooled, and the report says so.
	r = runCLI(t, nil, "compare", base[0], slow[0])
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stdout, "each entry's calls are pooled")

	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"compare", base[0]}, 2, "takes two runs"},
		{[]string{"compare", base[0], base[1], "--"}, 2, "each side needs at least one run"},
		{[]string{"compare", base[0], slow[0], "--metric", "max"}, 2, "unknown metric"},
		{[]string{"compare", base[0], slow[0], "--threshold", "lots"}, 2, "bad threshold"},
		{[]string{"compare", base[0], slow[0], "--min-delta", "soon"}, 2, "bad --min-delta"},
		{[]string{"compare", base[0], slow[0], "--alpha", "2"}, 2, "--alpha must be between 0 and 1"},
		{[]string{"compare", base[0], slow[0], "--format", "html"}, 2, "unknown --format"},
		{[]string{"compare", base[0], slow[0], "--domain", "gpu"}, 2, "unknown domain"},
		{[]string{"compare", base[0], slow[0], "--gate", "gpu"}, 2, "--gate: unknown domain"},
		{[]string{"compare", base[0], t.TempDir()}, 1, "holds no run"},
		{[]string{"compare", base[0], filepath.Dir(dir)}, 1, "holds several runs or output sets"},
	} {
		r := runCLI(t, nil, c.args...)
		require.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stderr, c.err)
	}
}

// `rocprof-go libdir` (hidden) unpacks and prints the injected libraries'
// directory, for Go programs built outside the repository.
func TestLibDirPrintsTheUnpackedLibraries(t *testing.T) {
	r := runCLI(t, []string{"XDG_CACHE_HOME=" + t.TempDir(), "ROCPROF_GO_LIBDIR="}, "libdir")
	require.Equal(t, 0, r.code, r.stderr)
	dir := strings.TrimSpace(r.stdout)
	for _, n := range []string{"librocprof-go-preload.so", "librocprof-go-shim.so", "librocprof-go-vgpu.so"} {
		require.FileExists(t, filepath.Join(dir, n))
	}
}
