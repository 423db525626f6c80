package convert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/output"
)

var csvOnly = []output.Format{output.FormatCSV}

func openSample(t *testing.T, ranks ...int) []*rocpdread.DB {
	t.Helper()
	var dbs []*rocpdread.DB
	for _, r := range ranks {
		path := filepath.Join(t.TempDir(), "results.db")
		require.NoError(t, rocpdtest.Write(path, rocpdtest.Sample(r)))
		db, err := rocpdread.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	return dbs
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(b), "\n"))
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestCSVFilesFollowRocprofv3Columns(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "out")
	res, err := convert.Run(openSample(t, 0), convert.Options{Formats: csvOnly, Dir: dir})
	require.NoError(t, err)
	require.Equal(t, 1, res.Spools)
	rows := map[string]uint64{}
	for _, f := range res.CSV {
		rows[filepath.Base(f.Path)] = f.Records
	}
	require.Equal(t, map[string]uint64{"out_kernel_trace.csv": 17, "out_hip_api_trace.csv": 21, "out_hsa_api_trace.csv": 1,
		"out_marker_api_trace.csv": 2, "out_memory_copy_trace.csv": 2, "out_memory_allocation_trace.csv": 2,
		"out_counter_collection.csv": 3, "out_agent_info.csv": 2}, rows)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 8, "the temporary spools are gone")

	k := lines(t, prefix+"_kernel_trace.csv")
	require.Equal(t, `"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"`, k[0])
	require.Equal(t, `"KERNEL_DISPATCH","Agent 1",1,0,1000,1,2,"gemm(float*, float*, float*)",8,1115400,1125400,512,0,32,0,16,256,1,1,1024,1,1`, k[1])

	h := lines(t, prefix+"_hip_api_trace.csv")
	require.Equal(t, `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"`, h[0])
	require.Equal(t, `"HIP_RUNTIME_API_EXT","hipMalloc",1000,1000,1,1100000,1102000`, h[1])
	require.Equal(t, []string{h[0], `"HSA_CORE_API","hsa_queue_create",1000,1000,5,1110600,1112100`}, lines(t, prefix+"_hsa_api_trace.csv"))

	m := lines(t, prefix+"_marker_api_trace.csv")
	// Completion order (the range ends last); a database's ids are kept.
	require.Equal(t, `"MARKER_CORE_RANGE_API","checkpoint",1000,1000,24,1113600,1113600`, m[1])
	require.Equal(t, `"MARKER_CORE_RANGE_API","compute phase",1000,1000,23,1112600,1412600`, m[2])

	c := lines(t, prefix+"_memory_copy_trace.csv")
	require.Equal(t, `"Kind","Direction","Stream_Id","Source_Agent_Id","Destination_Agent_Id","Correlation_Id","Start_Timestamp","End_Timestamp"`, c[0])
	require.Regexp(t, `^"MEMORY_COPY","MEMORY_COPY_HOST_TO_DEVICE",0,"Agent 0","Agent 1",25,\d+,\d+$`, c[1])

	a := lines(t, prefix+"_memory_allocation_trace.csv")
	require.Regexp(t, `^"MEMORY_ALLOCATION","MEMORY_ALLOCATION_ALLOCATE","Agent 1",1048576,"0x00007f0000000000",27,\d+,\d+$`, a[1])
	require.Regexp(t, `^"MEMORY_ALLOCATION","MEMORY_ALLOCATION_FREE","",0,"0x00007f0000000000",28,\d+,\d+$`, a[2])

	p := lines(t, prefix+"_counter_collection.csv")
	require.Equal(t, `"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id","Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Counter_Name","Counter_Value","Start_Timestamp","End_Timestamp"`, p[0])
	// Counters in id order (GRBM_COUNT is 1, SQ_WAVES 2), instances summed.
	require.Equal(t, `8,1,"Agent 1",1,1000,1000,1024,2,"gemm(float*, float*, float*)",256,512,0,32,0,16,"GRBM_COUNT",5.00000000e-01,1115400,1125400`, p[1])
	require.Equal(t, `8,1,"Agent 1",1,1000,1000,1024,2,"gemm(float*, float*, float*)",256,512,0,32,0,16,"SQ_WAVES",32.000000,1115400,1125400`, p[2])
	require.Contains(t, p[3], `"axpy(float, float*)",256,512,0,32,0,16,"SQ_WAVES",8.000000,`)
}

func TestCSVNamingOptions(t *testing.T) {
	cases := []struct {
		name string
		opt  convert.Options
		want string
	}{
		{"absolute", convert.Options{AgentIndex: "absolute"}, `"KERNEL_DISPATCH","Agent 1",`},
		{"type-relative", convert.Options{AgentIndex: "type-relative"}, `"KERNEL_DISPATCH","GPU 0",`},
		{"mangled", convert.Options{Mangled: true}, `"_Z4gemmPfS_S_.kd"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Dir, c.opt.Prefix, c.opt.Formats = t.TempDir(), "x", csvOnly
			_, err := convert.Run(openSample(t, 0), c.opt)
			require.NoError(t, err)
			require.Contains(t, lines(t, filepath.Join(c.opt.Dir, "x_kernel_trace.csv"))[1], c.want)
		})
	}
	_, err := convert.Run(openSample(t, 0), convert.Options{Formats: csvOnly, Dir: t.TempDir(), AgentIndex: "logical"})
	require.ErrorContains(t, err, "unknown --agent-index")
	_, err = convert.Run(openSample(t, 0), convert.Options{Formats: []output.Format{"xml"}, Dir: t.TempDir()})
	require.ErrorContains(t, err, "unknown output format")
}

// The CSV files summarise exactly like the database they came from.
func TestCSVSummarisesLikeTheDatabase(t *testing.T) {
	dbs := openSample(t, 0, 1)
	dir := t.TempDir()
	_, err := convert.Run(dbs, convert.Options{Formats: csvOnly, Dir: dir, Prefix: "run"})
	require.NoError(t, err)
	fromDB, err := summary.Build([]string{dbs[0].Path, dbs[1].Path}, summary.Options{})
	require.NoError(t, err)
	fromCSV, err := summary.Build([]string{dir}, summary.Options{})
	require.NoError(t, err)
	// Rows arrive in another order, so the variance may differ in its last bits.
	round(&fromDB.Total)
	round(&fromCSV.Total)
	require.Equal(t, fromDB.Total, fromCSV.Total)
	require.Equal(t, fromDB.TopKernels, fromCSV.TopKernels)
	// counter_collection.csv gives the same counter table.
	require.NotEmpty(t, fromDB.Counters)
	require.Equal(t, fromDB.Counters, fromCSV.Counters)
}

func round(g *summary.Group) {
	r := func(rows []summary.Row) {
		for i := range rows {
			rows[i].StdDevNs = float64(int64(rows[i].StdDevNs*1e6)) / 1e6
		}
	}
	for _, t := range g.Tables {
		r(t.Rows)
	}
	r(g.Domains)
}
