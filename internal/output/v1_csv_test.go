package output

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const v1GoldenDir = "../../testdata/output/v1"

func checkV1Golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(v1GoldenDir, name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll(v1GoldenDir, 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/output -run V1 -update")
	require.Equal(t, string(want), got, name)
}

// TestV1Golden: -o results.csv adds rocprof v1's files, whatever -f says;
// with --stats results.csv takes v1's database-backed layout.
func TestV1Golden(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	for _, tc := range []struct {
		name  string
		stats bool
	}{{"plain", false}, {"stats", true}} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			res, err := Write(Config{Dir: out, PrefixTemplate: "results.csv", Stats: tc.stats,
				Formats: []Format{"rocpd"}}, spools)
			require.NoError(t, err)
			files := readTree(t, out)
			var v1 []string
			for n := range files {
				if !strings.HasPrefix(n, "results.csv_") {
					v1 = append(v1, n)
				}
			}
			sort.Strings(v1)
			want := []string{"results.copy_stats.csv", "results.csv", "results.hip_stats.csv",
				"results.hsa_stats.csv", "results.stats.csv"}
			require.Equal(t, want, v1)
			for _, n := range v1 {
				checkV1Golden(t, tc.name+"."+n, files[n])
			}
			// rocprofv3's own files are still written by their own rules
			// (only the --stats ones here, -f not asking for csv).
			for n := range files {
				if strings.HasPrefix(n, "results.csv_") {
					require.True(t, tc.stats, n)
					require.True(t, strings.HasSuffix(n, "_stats.csv"), n)
				}
			}
			for _, f := range res.Files {
				require.Equal(t, int64(len(files[filepath.Base(f.Path)])), f.Bytes, f.Path)
			}
		})
	}
}

func TestV1NotWithoutCSVName(t *testing.T) {
	spools, out := t.TempDir(), t.TempDir()
	csvFixture(t, spools, 100)
	res, err := Write(Config{Dir: out, PrefixTemplate: "results", Formats: []Format{"rocpd"}}, spools)
	require.NoError(t, err)
	require.Empty(t, res.Files)
	require.Empty(t, readTree(t, out))
}

func TestV1MinimumOutputBytes(t *testing.T) {
	spools, out := t.TempDir(), t.TempDir()
	csvFixture(t, spools, 100)
	_, err := Write(Config{Dir: out, PrefixTemplate: "results.csv", MinimumOutputBytes: 1 << 30,
		Formats: []Format{FormatCSV}}, spools)
	require.NoError(t, err)
	require.Empty(t, readTree(t, out))
}

func TestAppendPythonFloat(t *testing.T) {
	for v, want := range map[float64]string{100: "100.0", 0: "0.0", 66.66666666666667: "66.66666666666667",
		0.5: "0.5", 1e-05: "1e-05", 12.25: "12.25"} {
		require.Equal(t, want, string(appendPythonFloat(nil, v)))
	}
	require.Equal(t, "16384", string(appendV1Counter(nil, 16384)))
	require.Equal(t, "0.2500000000", string(appendV1Counter(nil, 0.25)))
}

// TestCSVToStdout: -o stdout and -o stderr both send every CSV file, whole
// and one after the other, to standard output; no file is created.
func TestCSVToStdout(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	for _, name := range []string{"stdout", "stderr", "STDOUT"} {
		out := t.TempDir()
		var buf strings.Builder
		res, err := Write(Config{Dir: out, PrefixTemplate: name, Formats: []Format{FormatCSV},
			Stats: true, Stdout: &buf}, spools)
		require.NoError(t, err)
		require.Empty(t, readTree(t, out), name)
		// Concatenated files: each header line starts a file, in the order
		// Write lists them, each file's rows contiguous.
		ref := t.TempDir()
		_, err = Write(Config{Dir: ref, PrefixTemplate: "f", Formats: []Format{FormatCSV}, Stats: true}, spools)
		require.NoError(t, err)
		files := readTree(t, ref)
		var want strings.Builder
		for _, f := range res.Files {
			require.Equal(t, "stdout", f.Path)
			want.WriteString(files["f_"+f.Name+".csv"])
		}
		require.Equal(t, want.String(), buf.String(), name)
		require.Len(t, res.Files, len(files))
	}
}
