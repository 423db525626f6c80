package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConvertCommandWritesCSV(t *testing.T) {
	ranks := rankDBs(t, 2)
	dir := t.TempDir()
	r := runCLI(t, nil, "convert", "-i", ranks[0], "-i", ranks[1], "-f", "csv", "-d", dir, "-o", "run")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, filepath.Join(dir, "run_kernel_trace.csv")+": 34 rows\n")
	b, err := os.ReadFile(filepath.Join(dir, "run_kernel_trace.csv"))
	require.NoError(t, err)
	require.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 35)

	// The converted directory is a run compare and summary read.
	r = runCLI(t, nil, "summary", "-i", dir, "--format", "csv")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, runCLI(t, nil, "summary", "-i", ranks[0], "-i", ranks[1], "--format", "csv").stdout, r.stdout)

	// Default location, as rocpd convert.
	r = runCLI(t, nil, "convert", ranks[0], "-f", "csv", "-q")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)

	// Other formats, with the writers a run uses.
	r = runCLI(t, nil, "convert", ranks[0], "-f", "json", "-f", "perfetto,rocpd", "-d", dir, "-o", "fmt", "--stats")
	require.Equal(t, 0, r.code, r.stderr)
	for _, name := range []string{"fmt_results.json", "fmt_results.pftrace", "fmt_results.db"} {
		require.Contains(t, r.stdout, filepath.Join(dir, name)+"\n")
		require.FileExists(t, filepath.Join(dir, name))
	}

	// Formats separated by spaces, as docs/analysis.md writes them
	// (`-f csv pftrace`), and as rocpd's -f takes them.
	sp := t.TempDir()
	r = runCLI(t, nil, "convert", "-i", ranks[0], "-f", "csv", "pftrace", "-d", sp, "-o", "run1")
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, filepath.Join(sp, "run1_kernel_trace.csv"))
	require.FileExists(t, filepath.Join(sp, "run1_results.pftrace"))

	// A merged database into one hive partition per rank.
	all := filepath.Join(t.TempDir(), "all.db")
	require.Equal(t, 0, runCLI(t, nil, "merge", "-q", "--output", all, ranks[0], ranks[1]).code)
	hive := t.TempDir()
	r = runCLI(t, nil, "convert", all, "-f", "parquet", "--parquet-hive", "-d", hive)
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, filepath.Join(hive, "domain=kernels", "rank=0", "host=node0", "out-1000.parquet"))
	require.FileExists(t, filepath.Join(hive, "domain=kernels", "rank=1", "host=node0", "out-1001.parquet"))

	file := filepath.Join(dir, "run_kernel_trace.csv")
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"convert", "-f", "csv"}, 2, "needs input databases"},
		{[]string{"convert", ranks[0]}, 2, "needs -f FORMAT"},
		{[]string{"convert", ranks[0], "-f", "xml"}, 2, `unknown output format "xml"`},
		{[]string{"convert", ranks[0], "-f", "csv", "-A", "logical"}, 2, "unknown --agent-index"},
		{[]string{"convert", file, "-f", "csv"}, 1, "not a ROCpd database"},
		{[]string{"convert", ranks[0], "-f", "csv", "-d", file}, 1, "is a file"},
	} {
		r := runCLI(t, nil, c.args...)
		require.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stderr, c.err)
	}
}
