package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

func TestCompareCommandExitStatus(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, scale float64) string {
		p := rocpdtest.Sample(0)
		for i := range p.Dispatches {
			if strings.HasPrefix(p.Dispatches[i].Kernel, "gemm") {
				d := p.Dispatches[i]
				p.Dispatches[i].End = d.Start + int64(float64(d.End-d.Start)*scale)
			}
		}
		path := filepath.Join(dir, name)
		require.NoError(t, rocpdtest.Write(path, p))
		return path
	}
	base, same, slow := mk("base.db", 1), mk("same.db", 1), mk("slow.db", 1.2)

	r := runCLI(t, nil, "compare", base, same)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "0 regression(s)")

	r = runCLI(t, nil, "compare", base, slow, "--format", "markdown", "--threshold", "10%")
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stdout, "| **regression** | KERNEL_DISPATCH | `gemm(float*, float*, float*)` |")

	out := filepath.Join(dir, "report.xml")
	r = runCLI(t, nil, "compare", base, slow, "--format", "junit", "-o", out, "--metric", "p95")
	require.Equal(t, 3, r.code, r.stderr)
	require.FileExists(t, out)

	r = runCLI(t, nil, "compare", base, slow, "--threshold", "25%", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)

	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"compare", base}, 2, "takes two runs"},
		{[]string{"compare", base, slow, "--metric", "max"}, 2, "unknown metric"},
		{[]string{"compare", base, slow, "--threshold", "lots"}, 2, "bad threshold"},
		{[]string{"compare", base, slow, "--format", "html"}, 2, "unknown --format"},
		{[]string{"compare", base, slow, "--domain", "gpu"}, 2, "unknown domain"},
		{[]string{"compare", base, dir}, 1, "holds no trace CSV files"},
	} {
		r := runCLI(t, nil, c.args...)
		require.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stderr, c.err)
	}
}
