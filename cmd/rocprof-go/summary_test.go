package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMergeAndSummaryCommands(t *testing.T) {
	ranks := rankDBs(t, 4)
	all := filepath.Join(t.TempDir(), "all.db")
	r := runCLI(t, nil, append([]string{"merge", "--output", all}, ranks...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "merged 4 process image(s) from 4 file(s) into "+all+": 68 kernel dispatches, 92 regions, 8 memory copies\n", r.stdout)

	r = runCLI(t, nil, "summary", "-i", all, "--by-rank", "--top", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "TOP 1 KERNELS:")
	require.Regexp(t, `gemm\(float\*, float\*, float\*\) +\| +40 \|`, r.stdout)
	require.Contains(t, r.stdout, "RANK 3 (PID 1003@node1): KERNEL_DISPATCH SUMMARY:")

	// The merged file sums like its parts given separately.
	merged := runCLI(t, nil, "summary", "-i", all, "--format", "csv")
	parts := runCLI(t, nil, append([]string{"summary", "--format", "csv"}, ranks...)...)
	require.Equal(t, parts.stdout, merged.stdout)

	cases := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"merge", all}, 2, "needs --output"},
		{[]string{"merge", "--output", all}, 2, "needs input databases"},
		{[]string{"merge", "--output", all, ranks[0], ranks[0]}, 1, "given twice"},
		{[]string{"summary"}, 2, "needs input"},
		{[]string{"summary", "-i", all, "--format", "xml"}, 2, "use one of text, csv, json"},
		{[]string{"summary", "-i", filepath.Join(t.TempDir(), "none.db")}, 1, "no such file"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := runCLI(t, nil, c.args...)
			require.Equal(t, c.code, r.code, r.stderr)
			require.Contains(t, r.stderr, c.err)
		})
	}
}
