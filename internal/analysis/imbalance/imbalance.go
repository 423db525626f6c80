package imbalance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/duckdb"
)

// Row is one kernel launch shape across the ranks. Times are nanoseconds:
// the sum of the shape's dispatch durations on one rank, then the minimum,
// median and maximum of those sums over the ranks that ran the shape.
type Row struct {
	Kernel    string    `json:"kernel"`
	Grid      [3]uint32 `json:"grid"`
	Workgroup [3]uint32 `json:"workgroup"`
	Calls     int64     `json:"calls"`
	Ranks     int64     `json:"ranks"`
	TotalNs   int64     `json:"total_ns"`
	MinNs     int64     `json:"min_rank_ns"`
	MedianNs  float64   `json:"median_rank_ns"` // the middle rank's, or the mean of the two middle ones
	MaxNs     int64     `json:"max_rank_ns"`
	Slowest   int64     `json:"slowest_rank"` // the rank with MaxNs (the lowest such rank on a tie)
	SlowHost  string    `json:"slowest_host,omitempty"`
	Ratio     float64   `json:"max_over_median"` // MaxNs / MedianNs; 0 when MedianNs is 0
}

// Table is the imbalance table of a job directory.
type Table struct {
	Dir   string `json:"dir"`
	Ranks int64  `json:"ranks"` // ranks with kernel dispatches
	Rows  []Row  `json:"kernels"`
}

// Glob is the kernel table's files under dir, in DuckDB's glob syntax:
// every file of every partition, rank=<n>/host=<host>/ (or rank=<n>/
// alone, as rocprof-go 0.x wrote). It is what --print-query shows; the
// query Build runs names them relative to dir (RelGlob).
func Glob(dir string) string {
	return filepath.Join(dir, RelGlob)
}

// RelGlob is the kernel table's files relative to the job's directory:
// Build runs the engine in the directory, so that the pattern holds no
// character of its path (a `[` or `\` in it would be read as glob syntax
// and match a sibling's files, such as out1's for out[1]).
var RelGlob = filepath.Join("domain=kernels", "**", "*.parquet")

// HasGlobSyntax reports whether a path holds a character DuckDB's glob
// reads as syntax: a query naming it would not name it alone.
func HasGlobSyntax(path string) bool { return strings.ContainsAny(path, "*?[]{}\\") }

// Query is the SQL of the table over the files glob names; hosts adds the
// host= partition's slowest host. The docs print it (docs/mpi.md).
func Query(glob string, hosts bool) string {
	host, slowHost := "", "NULL"
	if hosts {
		host, slowHost = ", host", "first(host ORDER BY rank_ns DESC, rank)"
	}
	return `WITH per_rank AS (
    SELECT kernel_name, grid_x, grid_y, grid_z, block_x, block_y, block_z, rank` + host + `,
           count(*) AS calls, sum(duration_ns) AS rank_ns
    FROM read_parquet(` + duckdb.SQLString(glob) + `, hive_partitioning = true)
    GROUP BY ALL
)
SELECT kernel_name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
       sum(calls)::BIGINT AS calls, count(*) AS ranks, sum(rank_ns)::BIGINT AS total_ns,
       min(rank_ns)::BIGINT AS min_ns, median(rank_ns::DOUBLE) AS median_ns, max(rank_ns)::BIGINT AS max_ns,
       first(rank ORDER BY rank_ns DESC, rank) AS slowest_rank, ` + slowHost + ` AS slowest_host
FROM per_rank
GROUP BY ALL
ORDER BY total_ns DESC, kernel_name, grid_x, grid_y, grid_z, block_x, block_y, block_z`
}

// Build reads dir's kernel table with DuckDB bounded by o.
func Build(ctx context.Context, dir string, o duckdb.Options) (*Table, error) {
	t, _, err := build(ctx, dir, o)
	return t, err
}

// build is Build, also returning the engine's peak RSS (KiB).
func build(ctx context.Context, dir string, o duckdb.Options) (*Table, int64, error) {
	ranks, hosts, err := Layout(dir)
	if err != nil {
		return nil, 0, err
	}
	if o.TempDir == "" {
		// DuckDB's own default is .tmp in its working directory, which is
		// now dir: keep it in the caller's.
		if wd, err := os.Getwd(); err == nil {
			o.TempDir = filepath.Join(wd, ".tmp")
		}
	}
	o.Dir = dir
	res, err := duckdb.Query(ctx, o, Query(RelGlob, hosts))
	if err != nil {
		return nil, 0, fmt.Errorf("imbalance of %s: %w", dir, err)
	}
	t := &Table{Dir: dir, Ranks: ranks}
	for _, v := range res.Rows {
		r, err := row(v)
		if err != nil {
			return nil, 0, fmt.Errorf("imbalance of %s: %w", dir, err)
		}
		t.Rows = append(t.Rows, r)
	}
	return t, res.MaxRSSKiB, nil
}

// row decodes one result row of Query.
func row(v []any) (Row, error) {
	var r Row
	if len(v) != 15 {
		return r, fmt.Errorf("a row of %d columns, not 15", len(v))
	}
	var errs []error
	str := func(x any) string {
		s, ok := x.(string)
		if !ok && x != nil {
			errs = append(errs, fmt.Errorf("%v is no string", x))
		}
		return s
	}
	num := func(x any) json.Number {
		n, ok := x.(json.Number)
		if !ok {
			errs = append(errs, fmt.Errorf("%v is no number", x))
		}
		return n
	}
	i64 := func(x any) int64 {
		n, err := strconv.ParseInt(string(num(x)), 10, 64)
		if err != nil {
			errs = append(errs, err)
		}
		return n
	}
	r.Kernel = str(v[0])
	for i := range 3 {
		r.Grid[i], r.Workgroup[i] = uint32(i64(v[1+i])), uint32(i64(v[4+i]))
	}
	r.Calls, r.Ranks, r.TotalNs, r.MinNs = i64(v[7]), i64(v[8]), i64(v[9]), i64(v[10])
	med, err := strconv.ParseFloat(string(num(v[11])), 64)
	errs = append(errs, err)
	r.MedianNs, r.MaxNs, r.Slowest, r.SlowHost = med, i64(v[12]), i64(v[13]), str(v[14])
	if r.MedianNs > 0 {
		r.Ratio = float64(r.MaxNs) / r.MedianNs
	}
	return r, errors.Join(errs...)
}

// Layout checks that dir holds a hive kernel table, counts its rank
// partitions (a rank's files exist only when it had dispatches) and says
// whether its partitions name the host.
func Layout(dir string) (ranks int64, hosts bool, err error) {
	root := filepath.Join(dir, "domain=kernels")
	if _, err := os.Stat(root); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, false, fmt.Errorf("%s holds no hive-partitioned kernel table (%s): record the job with --kernel-trace -f parquet --parquet-hive -d %s, or convert its databases with rocprof-go convert -i DB... -f parquet --parquet-hive -d %s", dir, root, dir, dir)
		}
		return 0, false, err
	}
	parts, err := os.ReadDir(root)
	if err != nil {
		return 0, false, err
	}
	for _, r := range parts {
		if !r.IsDir() || !strings.HasPrefix(r.Name(), "rank=") {
			continue
		}
		ranks++
		if hosts {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(root, r.Name()))
		if err != nil {
			return 0, false, err
		}
		for _, s := range sub {
			hosts = hosts || s.IsDir() && strings.HasPrefix(s.Name(), "host=")
		}
	}
	if ranks == 0 {
		return 0, false, fmt.Errorf("%s has no rank=<n> partitions", root)
	}
	return ranks, hosts, nil
}
