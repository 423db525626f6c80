package output

import (
	"context"
	"encoding"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// The Parquet files are read back with DuckDB (the duckdbcheck module, a
// test-only dependency kept out of go.mod): its Parquet reader shares no
// code with Arrow's writer.

// duckDB runs each query in one DuckDB process and returns one line per
// query (a query must return one row; columns are tab-separated).
func duckDB(t testing.TB, queries ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "."}, queries...)...)
	cmd.Dir = "duckdbcheck"
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=1")
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "duckdbcheck: %s", stderr)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(queries), "%s", out)
	return lines
}

// sqlStr quotes a string for SQL.
func sqlStr(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// pqFileCheck is what DuckDB sees in one Parquet file: rows, the sum of
// duration_ns (0 without that column), the codecs used and whether every
// string column chunk is dictionary-encoded.
type pqFileCheck struct {
	rows, durationSum uint64
	codecs            string
	dict              bool
}

// pqFileDomain is the domain whose file path is.
func pqFileDomain(path string) model.Domain {
	for d := model.Domain(0); d < model.NumDomains; d++ {
		n := model.Domains[d].Parquet
		if strings.HasSuffix(path, "_"+n+".parquet") || strings.Contains(path, "domain="+n+string(filepath.Separator)) {
			return d
		}
	}
	return -1
}

// parquetCheck reads the files with DuckDB; results are keyed by base name.
func parquetCheck(t *testing.T, files ...string) map[string]pqFileCheck {
	t.Helper()
	var queries []string
	for _, f := range files {
		d := pqFileDomain(f)
		require.GreaterOrEqual(t, int(d), 0, f)
		dur := "0"
		if len(pqSchemas[d].FieldIndices("duration_ns")) > 0 {
			dur = "coalesce(sum(duration_ns), 0)"
		}
		q := sqlStr(f)
		queries = append(queries, fmt.Sprintf(`SELECT count(*), %s,
			(SELECT string_agg(DISTINCT compression, ',' ORDER BY compression) FROM parquet_metadata(%s)),
			(SELECT coalesce(bool_and(encodings LIKE '%%RLE_DICTIONARY%%'), true) FROM parquet_metadata(%s) WHERE type = 'BYTE_ARRAY')
			FROM read_parquet(%s)`, dur, q, q, q))
	}
	res := map[string]pqFileCheck{}
	for i, line := range duckDB(t, queries...) {
		f := strings.Split(line, "\t")
		require.Len(t, f, 4, line)
		rows, err := strconv.ParseUint(f[0], 10, 64)
		require.NoError(t, err, line)
		sum, err := strconv.ParseUint(f[1], 10, 64)
		require.NoError(t, err, line)
		res[filepath.Base(files[i])] = pqFileCheck{rows, sum, f[2], f[3] == "true"}
	}
	return res
}

func parquetFiles(t *testing.T, prefix string) map[model.Domain]string {
	files := map[model.Domain]string{}
	for d := model.Domain(0); d < model.NumDomains; d++ {
		p := parquetPath(prefix, d, &model.Config{})
		if _, err := os.Stat(p); err == nil {
			files[d] = p
		}
	}
	return files
}

func TestParquetIndependentReader(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, WriteParquet(prefix, in))
	files := parquetFiles(t, prefix)
	require.Len(t, files, outputtest.RecordedDomains(), "one file per domain the fixture records")
	var paths []string
	for _, p := range files {
		paths = append(paths, p)
	}
	got := parquetCheck(t, paths...)
	st, err := model.CollectStats(in)
	require.NoError(t, err)
	want := outputtest.Counts(16)
	want[model.DomCounter] /= 2 // two instances of each counter summed into one row
	for d, p := range files {
		c := got[filepath.Base(p)]
		require.Equal(t, 2*want[d], c.rows, d.String())
		require.Equal(t, "ZSTD", c.codecs, d.String())
		require.True(t, c.dict, "%s: string columns dictionary-encoded", d)
		if d != model.DomCounter {
			require.Equal(t, st[d].Total.Sum, c.durationSum, d.String())
		}
	}
	require.Equal(t, prefix+"_kernels.parquet", files[model.DomKernel])
}

// pqCSVCheck pairs an aggregate over a domain's CSV file with the same
// aggregate over its Parquet file.
type pqCSVCheck struct{ csv, pq string }

// pqGroups is an aggregate listing each value of a column with its count.
func pqGroups(col string) string {
	return fmt.Sprintf("(SELECT string_agg(k || '=' || n, ';' ORDER BY k) FROM (SELECT CAST(%s AS VARCHAR) k, count(*) n FROM src GROUP BY 1))", col)
}

var pqEventChecks = []pqCSVCheck{
	{"count(*)", "count(*)"},
	{"sum(End_Timestamp - Start_Timestamp)", "sum(duration_ns)"},
	{"min(Start_Timestamp)", "min(start_ns)"},
	{"max(End_Timestamp)", "max(end_ns)"},
}

var pqAPIChecks = append([]pqCSVCheck{{"sum(Correlation_Id)", "sum(correlation_id)"}, {"sum(Thread_Id)", "sum(tid)"},
	{"sum(Process_Id)", "sum(pid)"}, {pqGroups("Domain"), pqGroups("domain")}}, pqEventChecks...)

// pqCSVChecks are the aggregates compared per domain: counts, sums of
// durations, ids and sizes, and the rows per name (which exercises the
// dictionaries).
var pqCSVChecks = [model.NumDomains][]pqCSVCheck{
	model.DomHIP: append([]pqCSVCheck{{pqGroups("Function"), pqGroups("function")}}, pqAPIChecks...),
	model.DomHSA: append([]pqCSVCheck{{pqGroups("Function"), pqGroups("function")}}, pqAPIChecks...),
	// The CSV's Function of a marker is its message.
	model.DomMarker: append([]pqCSVCheck{{pqGroups("Function"), pqGroups("message")}}, pqAPIChecks...),
	model.DomKernel: append([]pqCSVCheck{{pqGroups("Kernel_Name"), pqGroups("kernel_name")},
		{"sum(Correlation_Id)", "sum(correlation_id)"}, {"sum(Thread_Id)", "sum(tid)"},
		{"sum(Dispatch_Id)", "sum(dispatch_id)"}, {"sum(Kernel_Id)", "sum(kernel_id)"},
		{"sum(Queue_Id)", "sum(queue_id)"}, {"sum(Stream_Id)", "sum(stream_id)"},
		{"sum(Grid_Size_X)", "sum(grid_x)"}, {"sum(Grid_Size_Y)", "sum(grid_y)"}, {"sum(Grid_Size_Z)", "sum(grid_z)"},
		{"sum(Workgroup_Size_X)", "sum(block_x)"}, {"sum(Workgroup_Size_Y)", "sum(block_y)"},
		{"sum(Workgroup_Size_Z)", "sum(block_z)"}, {"sum(LDS_Block_Size)", "sum(shared_mem)"},
		{"sum(Scratch_Size)", "sum(scratch)"}, {"sum(VGPR_Count)", "sum(regs)"},
		{"sum(Accum_VGPR_Count)", "sum(accum_regs)"}, {"sum(SGPR_Count)", "sum(sgprs)"}}, pqEventChecks...),
	model.DomCopy: append([]pqCSVCheck{{pqGroups("Direction"), pqGroups("direction")},
		{"sum(Correlation_Id)", "sum(correlation_id)"}, {"sum(Stream_Id)", "sum(stream_id)"}}, pqEventChecks...),
	model.DomAlloc: append([]pqCSVCheck{{pqGroups("Operation"), pqGroups("operation")},
		{"sum(Correlation_Id)", "sum(correlation_id)"}, {"sum(Allocation_Size)", "sum(size)"}}, pqEventChecks...),
	model.DomScratch: append([]pqCSVCheck{{pqGroups("Operation"), pqGroups("operation")},
		{"sum(Allocation_Size)", "sum(size)"}}, pqEventChecks...),
	// A counter row sums a counter's instances on one dispatch, in both.
	model.DomCounter: append([]pqCSVCheck{{"sum(Counter_Value::DOUBLE)", "sum(value)"},
		{"sum(Dispatch_Id)", "sum(dispatch_id)"}, {pqGroups("Counter_Name"), pqGroups("counter_name")},
		{pqGroups("Kernel_Name"), pqGroups("kernel_name")}, {"sum(Correlation_Id)", "sum(correlation_id)"},
		{"sum(Thread_Id)", "sum(tid)"}, {"sum(Process_Id)", "sum(pid)"}, {"sum(Queue_Id)", "sum(queue_id)"},
		{"sum(Kernel_Id)", "sum(kernel_id)"}, {"sum(Grid_Size)", "sum(grid_size)"},
		{"sum(Workgroup_Size)", "sum(workgroup_size)"}}, pqEventChecks...),
}

// A run of three processes, long enough for several row groups per file,
// written as CSV and as Parquet: DuckDB finds in every Parquet file as
// many rows as the CSV file of its domain, the same sums of durations,
// ids and sizes, and the same rows per name.
func TestParquetAgreesWithCSVInDuckDB(t *testing.T) {
	const n = 12_000 // 36,000 dispatches and 72,000 HIP calls: two and three row groups
	pids := []int32{100, 200, 300}
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spools")
	require.NoError(t, os.Mkdir(spoolDir, 0o755))
	spools := outputtest.WriteSpools(t, spoolDir, pids, n)
	out := filepath.Join(dir, "out")
	res, err := Write(model.Config{Dir: out, PrefixTemplate: "run", Formats: []model.Format{model.FormatCSV}}, spoolDir)
	require.NoError(t, err)
	prefix := filepath.Join(out, "run")
	writeFormats(t, []model.Format{FormatJSON, FormatPerfetto, FormatROCpd, FormatParquet}, prefix, spools)

	csvFiles := map[model.Domain]model.File{}
	for _, f := range res.Files {
		if !strings.HasSuffix(f.Name, "_trace") && f.Name != "counter_collection" {
			continue
		}
		for d := model.Domain(0); d < model.NumDomains; d++ {
			if d.String() == f.Domain {
				csvFiles[d] = f
			}
		}
	}
	require.Len(t, csvFiles, outputtest.RecordedDomains())
	pqFiles := parquetFiles(t, prefix)
	require.Len(t, pqFiles, outputtest.RecordedDomains())

	var queries []string
	for d := model.Domain(0); d < model.Domain(outputtest.RecordedDomains()); d++ {
		var cs, ps []string
		for _, c := range pqCSVChecks[d] {
			cs, ps = append(cs, c.csv), append(ps, c.pq)
		}
		csvSrc := fmt.Sprintf("SELECT * FROM read_csv(%s, header = true)", sqlStr(csvFiles[d].Path))
		pqSrc := fmt.Sprintf("SELECT * FROM read_parquet(%s)", sqlStr(pqFiles[d]))
		queries = append(queries,
			fmt.Sprintf("WITH src AS (%s) SELECT %s FROM src", csvSrc, strings.Join(cs, ", ")),
			fmt.Sprintf("WITH src AS (%s) SELECT %s FROM src", pqSrc, strings.Join(ps, ", ")))
	}
	lines := duckDB(t, queries...)
	want := outputtest.Counts(n)
	for d := model.Domain(0); d < model.Domain(outputtest.RecordedDomains()); d++ {
		csvLine, pqLine := lines[2*d], lines[2*d+1]
		require.Equal(t, csvLine, pqLine, "%s: CSV (first) and Parquet aggregates:\n%s",
			d, strings.Join(func() []string {
				var s []string
				for _, c := range pqCSVChecks[d] {
					s = append(s, c.csv+" | "+c.pq)
				}
				return s
			}(), "\n"))
		var rows uint64
		for i, c := range pqCSVChecks[d] {
			if c.pq == "count(*)" {
				rows, err = strconv.ParseUint(strings.Split(pqLine, "\t")[i], 10, 64)
			}
		}
		require.NoError(t, err)
		require.Equal(t, csvFiles[d].Records, rows, d.String())
		if d == model.DomCounter {
			require.Equal(t, want[d]*uint64(len(pids))/2, rows, d.String())
		} else {
			require.Equal(t, want[d]*uint64(len(pids)), rows, d.String())
		}
	}
	// Several row groups, each with its own dictionary.
	// 64-bit columns delta-encoded, in every row group.
	q := sqlStr(pqFiles[model.DomHIP])
	rg := duckDB(t, fmt.Sprintf("SELECT count(DISTINCT row_group_id) FROM parquet_metadata(%s)", q),
		fmt.Sprintf(`SELECT bool_and(encodings LIKE '%%DELTA_BINARY_PACKED%%') FROM parquet_metadata(%s)
			WHERE path_in_schema IN ('correlation_id', 'start_ns', 'end_ns', 'duration_ns')`, q))
	require.Equal(t, []string{"3", "true"}, rg)
}

// Two kernel ids with the same name (one code object loaded twice) share
// one dictionary entry, so the column stays dictionary-encoded.
func TestParquetDictionaryNamesUnique(t *testing.T) {
	b := spooltest.New(outputtest.Info(100))
	outputtest.Emit(100, 64, func(r encoding.BinaryAppender) { b.Add(r) })
	b.Add(tracing.KernelSymbol{KernelID: 9, CodeObjectID: 2, KernelObject: 0x9000, Name: []byte(outputtest.Kernels[0])})
	for i := 0; i < 10; i++ {
		b.Add(tracing.KernelDispatch{AgentNode: 1, TID: 100, QueueID: 1, DispatchID: uint64(1000 + i), KernelID: 9,
			CorrelationID: uint64(5000 + i), Start: 1, End: 2})
	}
	spool, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, WriteParquet(prefix, &model.Input{Spools: []string{spool}}))
	files := parquetFiles(t, prefix)
	c := parquetCheck(t, files[model.DomKernel])[filepath.Base(files[model.DomKernel])]
	require.True(t, c.dict)
	got := duckDB(t, fmt.Sprintf(`SELECT string_agg(k || '=' || n, '|' ORDER BY k) FROM
		(SELECT kernel_name k, count(*) n FROM read_parquet(%s) GROUP BY 1)`, sqlStr(files[model.DomKernel])))
	require.Equal(t, "reduce(double*, double*, unsigned long)=21|vectorAdd_float(float*, float const*, float const*, int)=32|"+
		"void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)=21", got[0])
}

func TestParquetHiveLayout(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 8)
	in.Config.ParquetHive, in.Config.ParquetRank = true, 3
	dir := t.TempDir()
	require.NoError(t, WriteParquet(filepath.Join(dir, "out"), in))
	p := filepath.Join(dir, "domain=kernels", "rank=3", "out.parquet")
	_, err := os.Stat(p)
	require.NoError(t, err)
	got := duckDB(t, fmt.Sprintf(`SELECT string_agg(domain || ':' || rank || ':' || n, ' ' ORDER BY domain) FROM
		(SELECT domain, rank, count(*) n FROM read_parquet(%s, hive_partitioning = true, union_by_name = true) GROUP BY ALL)`,
		sqlStr(filepath.Join(dir, "domain=*", "rank=*", "*.parquet"))))
	want := outputtest.Counts(8)
	want[model.DomCounter] /= 2 // two instances of each counter summed into one row
	var parts []string
	for _, d := range []model.Domain{model.DomCounter, model.DomHIP, model.DomHSA, model.DomKernel, model.DomMarker, model.DomAlloc, model.DomCopy, model.DomScratch} {
		parts = append(parts, fmt.Sprintf("%s:3:%d", model.Domains[d].Parquet, want[d]))
	}
	require.Equal(t, strings.Join(parts, " "), got[0])

	// A run's prefix <dir>/<host>/<pid> under a hive root: the partitions
	// start at the root, the host and pid name the file.
	in.Config.ParquetHiveRoot = dir
	require.NoError(t, WriteParquet(filepath.Join(dir, "node7", "4242"), in))
	require.FileExists(t, filepath.Join(dir, "domain=kernels", "rank=3", "node7-4242.parquet"))
}

// Arrow's own reader still reads the files through the replaced zstd codec
// (decoding and the streaming page reader are Arrow's), and the stored
// Arrow schema gives string columns back as dictionaries.
func TestParquetArrowReadsBack(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 40)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, WriteParquet(prefix, in))
	for _, props := range []parquet.ReaderProperties{*parquet.NewReaderProperties(nil), func() parquet.ReaderProperties {
		p := parquet.NewReaderProperties(nil)
		p.BufferedStreamEnabled = true
		return *p
	}()} {
		pf, err := file.OpenParquetFile(prefix+"_kernels.parquet", false, file.WithReadProps(&props))
		require.NoError(t, err)
		r, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		require.NoError(t, err)
		tbl, err := r.ReadTable(context.Background())
		require.NoError(t, err)
		require.EqualValues(t, 40, tbl.NumRows())
		require.Equal(t, pqDictType, tbl.Schema().Field(8).Type)
		var dur uint64
		for _, c := range tbl.Column(12).Data().Chunks() {
			for _, v := range c.(*array.Uint64).Uint64Values() {
				dur += v
			}
		}
		st, err := model.CollectStats(in)
		require.NoError(t, err)
		require.Equal(t, st[model.DomKernel].Total.Sum, dur)
		tbl.Release()
		require.NoError(t, pf.Close())
	}
}
