package rocpdread_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

func writeRanks(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for r := 0; r < n; r++ {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.db", r))
		require.NoError(t, rocpdtest.Write(p, rocpdtest.Sample(r)))
		paths = append(paths, p)
	}
	return paths
}

// counts returns the row count of every un-suffixed view.
func counts(t *testing.T, path string) map[string]int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	out := map[string]int64{}
	for _, base := range rocpdtest.BaseTables {
		var n int64
		require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM "+base).Scan(&n), base)
		out[base] = n
	}
	return out
}

func TestOpenReadsOneImage(t *testing.T) {
	path := writeRanks(t, 1)[0]
	db, err := rocpdread.Open(path)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, []rocpdread.Image{{Suffix: rocpdtest.Suffix(rocpdtest.RankGUID(0)), GUID: rocpdtest.RankGUID(0)}}, db.Images)

	names := map[string]int{}
	require.NoError(t, db.Dispatches(func(in *rocpdread.Info, d *rocpdread.Dispatch) error {
		names[in.Symbol(d.KernelID).Name()]++
		require.Positive(t, d.CorrelationID)
		return nil
	}))
	require.Equal(t, map[string]int{"gemm(float*, float*, float*)": 10, "axpy(float, float*)": 5, "reduce(float*)": 2}, names)

	var regions, samples int
	var message string
	require.NoError(t, db.Regions(func(in *rocpdread.Info, g *rocpdread.Region) error {
		if g.Sample {
			samples++
			require.Equal(t, "checkpoint", g.Message)
			require.Equal(t, "roctxMarkA", g.Name)
		} else {
			regions++
		}
		if g.Name == "roctxRangePushA" {
			message = g.Message
		}
		return nil
	}))
	require.Equal(t, 4+1+17+1, regions)
	require.Equal(t, 1, samples)
	require.Equal(t, "compute phase", message)

	in, err := db.LoadInfo(db.Images[0])
	require.NoError(t, err)
	require.Equal(t, 0, in.Processes[1000].Rank)
	require.Equal(t, "node0", in.Processes[1000].Hostname)
}

func TestOpenRejectsNonROCpd(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content, want string
	}{
		{"text.db", "hello", "not a ROCpd database"},
		{"missing.db", "", "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if c.content != "" {
				require.NoError(t, os.WriteFile(p, []byte(c.content), 0o644))
			}
			_, err := rocpdread.Open(p)
			require.ErrorContains(t, err, c.want)
		})
	}
	_, err := rocpdread.Open(dir)
	require.ErrorContains(t, err, "is a directory")
}

func TestMergeFourRanksAddsUpEveryCount(t *testing.T) {
	inputs := writeRanks(t, 4)
	want := map[string]int64{}
	for _, in := range inputs {
		for base, n := range counts(t, in) {
			want[base] += n
		}
	}
	out := filepath.Join(t.TempDir(), "all.db")
	res, err := rocpdread.Merge(context.Background(), out, inputs)
	require.NoError(t, err)
	require.Equal(t, 4, res.Images)
	require.Equal(t, want, counts(t, out))
	require.Equal(t, want, res.Rows)
	require.Equal(t, []string{"top_kernels"}, res.Views)
	require.Empty(t, res.Warn)

	db, err := rocpdread.Open(out)
	require.NoError(t, err)
	defer db.Close()
	require.Len(t, db.Images, 4)
	var dispatches int
	ranks := map[int]bool{}
	require.NoError(t, db.Dispatches(func(in *rocpdread.Info, d *rocpdread.Dispatch) error {
		dispatches++
		ranks[in.Processes[d.PID].Rank] = true
		return nil
	}))
	require.Equal(t, int(want["rocpd_kernel_dispatch"]), dispatches)
	require.Len(t, ranks, 4)

	// The carried-over data view sees all ranks through the unions.
	var calls int64
	require.NoError(t, db.SQL.QueryRow(`SELECT total_calls FROM top_kernels WHERE name = 'gemm(float*, float*, float*)'`).Scan(&calls))
	require.EqualValues(t, 40, calls)

	// A merged database merges again (its images keep their suffixes).
	out2 := filepath.Join(t.TempDir(), "again.db")
	extra := filepath.Join(t.TempDir(), "rank9.db")
	require.NoError(t, rocpdtest.Write(extra, rocpdtest.Sample(9)))
	res, err = rocpdread.Merge(context.Background(), out2, []string{out, extra})
	require.NoError(t, err)
	require.Equal(t, 5, res.Images)
}

func TestMergeRejectsBadInputs(t *testing.T) {
	inputs := writeRanks(t, 2)
	dir := t.TempDir()
	cases := []struct {
		name   string
		out    string
		inputs []string
		want   string
	}{
		{"duplicate", filepath.Join(dir, "dup.db"), []string{inputs[0], inputs[0]}, "given twice"},
		{"output is input", inputs[1], inputs, "also an input"},
		{"none", filepath.Join(dir, "none.db"), nil, "no input"},
		{"missing", filepath.Join(dir, "m.db"), []string{filepath.Join(dir, "nope.db")}, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := rocpdread.Merge(context.Background(), c.out, c.inputs)
			require.ErrorContains(t, err, c.want)
			if c.name != "output is input" {
				require.NoFileExists(t, c.out)
			}
			require.NoFileExists(t, c.out+".tmp")
		})
	}
}

// Databases from rocprof-go's own ROCpd writer merge and read like the
// SQL-built ones.
func TestMergeWriterDatabases(t *testing.T) {
	dir, spools := t.TempDir(), t.TempDir()
	var inputs []string
	want := map[string]int64{}
	for r := 0; r < 4; r++ {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.db", r))
		require.NoError(t, rocpdtest.WriterDB(p, spools, int32(5000+r), 6+r))
		inputs = append(inputs, p)
		for base, n := range counts(t, p) {
			want[base] += n
		}
	}
	require.EqualValues(t, 6+7+8+9, want["rocpd_kernel_dispatch"])
	out := filepath.Join(t.TempDir(), "all.db")
	res, err := rocpdread.Merge(context.Background(), out, inputs)
	require.NoError(t, err)
	require.Equal(t, 4, res.Images)
	require.Equal(t, want, counts(t, out))
	require.Empty(t, res.Warn)
	require.NotEmpty(t, res.Views, "the writer's data views are carried over")

	db, err := rocpdread.Open(out)
	require.NoError(t, err)
	defer db.Close()
	pids := map[int64]int{}
	require.NoError(t, db.Dispatches(func(in *rocpdread.Info, d *rocpdread.Dispatch) error {
		pids[in.PID(d.PID)]++
		return nil
	}))
	require.Equal(t, map[int64]int{5000: 6, 5001: 7, 5002: 8, 5003: 9}, pids)
	// The writer's own views answer over all ranks.
	var n int64
	require.NoError(t, db.SQL.QueryRow(`SELECT COUNT(*) FROM kernels`).Scan(&n))
	require.EqualValues(t, 30, n)
}

// rewrite opens a fixture database for editing.
func rewrite(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

func TestOpenVariants(t *testing.T) {
	suffix := rocpdtest.Suffix(rocpdtest.RankGUID(0))
	t.Run("bare table names (empty uuid)", func(t *testing.T) {
		path := writeRanks(t, 1)[0]
		stmts := []string{"DROP VIEW top_kernels"}
		for _, base := range rocpdtest.BaseTables {
			stmts = append(stmts, "DROP VIEW "+base, "ALTER TABLE "+base+suffix+" RENAME TO "+base)
		}
		stmts = append(stmts, "UPDATE rocpd_metadata SET value = '' WHERE tag = 'uuid'")
		rewrite(t, path, stmts...)
		db, err := rocpdread.Open(path)
		require.NoError(t, err)
		defer db.Close()
		require.Equal(t, []rocpdread.Image{{}}, db.Images)
		n := 0
		require.NoError(t, db.Dispatches(func(*rocpdread.Info, *rocpdread.Dispatch) error { n++; return nil }))
		require.Equal(t, 17, n)
		_, err = rocpdread.Merge(context.Background(), filepath.Join(t.TempDir(), "m.db"), []string{path})
		require.ErrorContains(t, err, "without a uuid suffix")
	})
	t.Run("other schema version", func(t *testing.T) {
		path := writeRanks(t, 1)[0]
		rewrite(t, path, "UPDATE rocpd_metadata"+suffix+" SET value = '2' WHERE tag = 'schema_version'")
		_, err := rocpdread.Open(path)
		require.ErrorContains(t, err, "ROCpd schema version 2 is not supported")
	})
	t.Run("plain SQLite file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "other.db")
		rewrite(t, path, "CREATE TABLE t (x)")
		_, err := rocpdread.Open(path)
		require.ErrorIs(t, err, rocpdread.ErrNotROCpd)
	})
	t.Run("table missing", func(t *testing.T) {
		path := writeRanks(t, 1)[0]
		rewrite(t, path, "DROP VIEW rocpd_region", "DROP TABLE rocpd_region"+suffix)
		_, err := rocpdread.Open(path)
		require.ErrorContains(t, err, "the database is incomplete")
	})
}
