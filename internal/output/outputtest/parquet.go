package outputtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// The Parquet files are read back with DuckDB (the engine make build
// builds, build/rocprof-go-duckdb, the one job --imbalance runs): its
// Parquet reader shares no code with Arrow's writer.

// DuckDB runs each query in one DuckDB process and returns one line per
// query (a query must return one row; columns are tab-separated).
func DuckDB(t testing.TB, queries ...string) []string {
	t.Helper()
	cmd := exec.Command(duckdbEngine(t), append([]string{"--"}, queries...)...)
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "rocprof-go-duckdb: %s", stderr)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(queries), "%s", out)
	return lines
}

// duckdbEngine is make build's DuckDB engine: $ROCPROF_GO_BUILD (the
// Makefile exports it) or the repository's build directory. (Not
// testsys.Artifact: testsys measures clocks with cgo, and this package is
// pure Go.)
func duckdbEngine(t testing.TB) string {
	build := os.Getenv("ROCPROF_GO_BUILD")
	if build == "" {
		_, self, _, _ := runtime.Caller(0)
		build = filepath.Join(filepath.Dir(self), "..", "..", "..", "build")
	}
	p := filepath.Join(build, "rocprof-go-duckdb")
	_, err := os.Stat(p)
	require.NoError(t, err, "%s is missing: run make build (it builds the DuckDB engine)", p)
	return p
}

// SQLStr quotes a string for SQL.
func SQLStr(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ParquetFileCheck is what DuckDB sees in one Parquet file: rows, the sum of
// duration_ns (0 without that column), the codecs used and whether every
// string column chunk is dictionary-encoded.
type ParquetFileCheck struct {
	Rows, DurationSum uint64
	Codecs            string
	Dict              bool
}

// ParquetFileDomain is the domain whose file path is.
func ParquetFileDomain(path string) model.Domain {
	for d := model.Domain(0); d < model.NumDomains; d++ {
		n := model.Domains[d].Parquet
		if strings.HasSuffix(path, "_"+n+".parquet") || strings.Contains(path, "domain="+n+string(filepath.Separator)) {
			return d
		}
	}
	return -1
}

// ParquetCheck reads the files with DuckDB; results are keyed by base name.
// A file has a duration_ns column or not as its own schema says.
func ParquetCheck(t *testing.T, files ...string) map[string]ParquetFileCheck {
	t.Helper()
	var schemas []string
	for _, f := range files {
		require.GreaterOrEqual(t, int(ParquetFileDomain(f)), 0, f)
		schemas = append(schemas, fmt.Sprintf(`SELECT count(*) FROM parquet_schema(%s) WHERE name = 'duration_ns'`, SQLStr(f)))
	}
	hasDuration := DuckDB(t, schemas...)
	var queries []string
	for i, f := range files {
		dur := "0"
		if hasDuration[i] != "0" {
			dur = "coalesce(sum(duration_ns), 0)"
		}
		q := SQLStr(f)
		queries = append(queries, fmt.Sprintf(`SELECT count(*), %s,
			(SELECT string_agg(DISTINCT compression, ',' ORDER BY compression) FROM parquet_metadata(%s)),
			(SELECT coalesce(bool_and(encodings LIKE '%%RLE_DICTIONARY%%'), true) FROM parquet_metadata(%s) WHERE type = 'BYTE_ARRAY')
			FROM read_parquet(%s)`, dur, q, q, q))
	}
	res := map[string]ParquetFileCheck{}
	for i, line := range DuckDB(t, queries...) {
		f := strings.Split(line, "\t")
		require.Len(t, f, 4, line)
		rows, err := strconv.ParseUint(f[0], 10, 64)
		require.NoError(t, err, line)
		sum, err := strconv.ParseUint(f[1], 10, 64)
		require.NoError(t, err, line)
		res[filepath.Base(files[i])] = ParquetFileCheck{rows, sum, f[2], f[3] == "true"}
	}
	return res
}

// ParquetFiles are the Parquet files of a prefix (no hive layout), by
// domain: <prefix>_<name>.parquet.
func ParquetFiles(t *testing.T, prefix string) map[model.Domain]string {
	files := map[model.Domain]string{}
	for d := model.Domain(0); d < model.NumDomains; d++ {
		p := prefix + "_" + model.Domains[d].Parquet + ".parquet"
		if _, err := os.Stat(p); err == nil {
			files[d] = p
		}
	}
	return files
}
