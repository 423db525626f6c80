package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/output/parquet"
)

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
	const n = 12_000                       // 36,000 dispatches and 72,000 HIP calls: two and three row groups
	defer parquet.SetGroupRows(32 << 10)() // of 32,768 rows (the default is 256Ki)
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
	pqFiles := outputtest.ParquetFiles(t, prefix)
	require.Len(t, pqFiles, outputtest.RecordedDomains())

	var queries []string
	for d := model.Domain(0); d < model.Domain(outputtest.RecordedDomains()); d++ {
		var cs, ps []string
		for _, c := range pqCSVChecks[d] {
			cs, ps = append(cs, c.csv), append(ps, c.pq)
		}
		csvSrc := fmt.Sprintf("SELECT * FROM read_csv(%s, header = true)", outputtest.SQLStr(csvFiles[d].Path))
		pqSrc := fmt.Sprintf("SELECT * FROM read_parquet(%s)", outputtest.SQLStr(pqFiles[d]))
		queries = append(queries,
			fmt.Sprintf("WITH src AS (%s) SELECT %s FROM src", csvSrc, strings.Join(cs, ", ")),
			fmt.Sprintf("WITH src AS (%s) SELECT %s FROM src", pqSrc, strings.Join(ps, ", ")))
	}
	lines := outputtest.DuckDB(t, queries...)
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
	q := outputtest.SQLStr(pqFiles[model.DomHIP])
	rg := outputtest.DuckDB(t, fmt.Sprintf("SELECT count(DISTINCT row_group_id) FROM parquet_metadata(%s)", q),
		fmt.Sprintf(`SELECT bool_and(encodings LIKE '%%DELTA_BINARY_PACKED%%') FROM parquet_metadata(%s)
			WHERE path_in_schema IN ('correlation_id', 'start_ns', 'end_ns', 'duration_ns')`, q))
	require.Equal(t, []string{"3", "true"}, rg)
}

// Two kernel ids with the same name (one code object loaded twice) share
// one dictionary entry, so the column stays dictionary-encoded.
