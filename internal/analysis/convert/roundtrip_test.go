package convert_test

import (
	"encoding"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpd"
	"github.com/rocprof-go/rocprof-go/internal/analysis/summary"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

func agent(node, logical, typeIdx uint64, typ tracing.AgentType, name string) tracing.AgentInfo {
	var a tracing.AgentInfo
	a.Values[tracing.AgentNodeID] = node
	a.Values[tracing.AgentLogicalNodeID] = logical
	a.Values[tracing.AgentTypeField] = uint64(typ)
	a.Values[tracing.AgentLogicalNodeTypeID] = typeIdx
	a.Name, a.VendorName, a.ProductName, a.ModelName = name, "AMD", "Test "+name, name
	return a
}

// runSpool writes what a profiled process would have recorded: every
// domain the spool carries, two threads, two GPUs.
func runSpool(t *testing.T, dir string, pid int32, n int) {
	t.Helper()
	b := spooltest.New(tracing.ProcessInfo{PID: pid, PPID: 1, PSize: 1, StartBoottimeNs: uint64(pid) * 1000,
		Hostname: "host", Argv: []string{"./app", "-n", "4"}, Environ: []string{"HOME=/root"}, Exe: "./app"})
	add := func(r encoding.BinaryAppender) { b.Add(r) }
	add(agent(0, 0, 0, tracing.AgentCPU, "CPU"))
	add(agent(2, 1, 0, tracing.AgentGPU, "gfx90a"))
	add(agent(3, 2, 1, tracing.AgentGPU, "gfx942"))
	for i, f := range []string{"hipMalloc", "hipLaunchKernel", "hipMemcpyAsync"} {
		add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: uint64(i + 1), Value: []byte(f)})
	}
	add(tracing.String{Table: uint32(tracing.DomainHSACore), ID: 7, Value: []byte("hsa_queue_create")})
	add(tracing.String{Table: tracing.TableCounter, ID: 5, Value: []byte("SQ_WAVES")})
	add(tracing.CodeObject{CodeObjectID: 1, Operation: tracing.CodeObjectLoad, AgentNode: 2, LoadBase: 0x7f00, LoadSize: 4096,
		URI: []byte("file:///app#offset=0&size=4096")})
	kernels := []string{"_Z4gemmPfS_S_.kd", "_ZN5axpy6kernelIfEEvT_PS1_.kd"}
	for i, k := range kernels {
		add(tracing.KernelSymbol{KernelID: uint64(i + 1), CodeObjectID: 1, KernelObject: 0x100 * uint64(i+1), KernargSize: 24,
			GroupSegmentSize: uint32(300 * (i + 1)), VGPRCount: 12, AGPRCount: 4, SGPRCount: 20, Name: []byte(k)})
	}
	tids := []uint32{uint32(pid), uint32(pid) + 3}
	base := uint64(pid) * 1_000_000
	for i := 0; i < n; i++ {
		t0, tid, corr := base+uint64(i)*10_000, tids[i%2], uint64(3*i+1)
		add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: tid, CorrelationID: corr, Start: t0, End: t0 + 700})
		add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 2, TID: tid, CorrelationID: corr + 1, Start: t0 + 800, End: t0 + 950})
		add(tracing.APICall{Domain: tracing.DomainHSACore, Function: 7, TID: tid, CorrelationID: corr + 2, Start: t0 + 960, End: t0 + 990})
		add(tracing.KernelDispatch{AgentNode: uint32(2 + i%2), TID: tid, QueueID: uint64(1 + i%2), StreamID: uint64(i % 2),
			DispatchID: uint64(i + 1), KernelID: uint64(1 + i%2), CorrelationID: corr + 1, Start: t0 + 1000,
			End: t0 + 1000 + uint64(200+i*13), Grid: [3]uint32{4096, 2, 1}, Workgroup: [3]uint32{64, 2, 1},
			GroupSegmentSize: 600, PrivateSegmentSize: 32, VGPRCount: 12, AGPRCount: 4, SGPRCount: 20})
		add(tracing.MemoryCopy{Direction: tracing.CopyDirection(1 + i%4), SrcAgentNode: 0, DstAgentNode: uint32(2 + i%2), TID: tid,
			Bytes: 1 << 12, StreamID: uint64(i % 2), CorrelationID: corr, Start: t0 + 3000, End: t0 + 3300, SrcAddress: 0x10, DstAddress: 0x20})
		if i%3 == 0 {
			add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange, TID: tid,
				CorrelationID: corr + 100, Start: t0, End: t0 + 5000, Message: []byte("step")})
			add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerMark, TID: tid,
				CorrelationID: corr + 101, Start: t0 + 7, End: t0 + 7, Message: []byte("tick")})
			add(tracing.MemoryAllocation{Operation: tracing.AllocAllocate, AgentNode: 2, TID: tid, Address: 0x7000 + uint64(i),
				Size: 1 << 16, CorrelationID: corr, Start: t0 + 10, End: t0 + 20})
			add(tracing.MemoryAllocation{Operation: tracing.AllocFree, TID: tid, Address: 0x7000 + uint64(i),
				CorrelationID: corr, Start: t0 + 30, End: t0 + 40})
			add(tracing.ScratchMemory{Operation: tracing.ScratchAlloc, AgentNode: 2, TID: tid, Flags: 1, QueueID: 1,
				Size: 1 << 14, CorrelationID: corr + 1, Start: t0 + 1000, End: t0 + 1010})
			for inst := 0; inst < 3; inst++ {
				add(tracing.CounterSample{DispatchID: uint64(i + 1), CounterID: 5, Value: 2.5 + float64(inst),
					AgentNode: uint32(2 + i%2), Dims: []tracing.CounterDim{{DimensionID: 1, Index: uint32(inst)}}})
			}
		}
	}
	add(tracing.Marker{Domain: tracing.DomainMarkerControl, Function: tracing.MarkerProfilerPause, TID: tids[0],
		CorrelationID: 999, Start: base + 1, End: base + 2})
	_, err := b.WriteFile(dir)
	require.NoError(t, err)
}

// csvFiles writes the CSV files of the spools in dir and returns them by
// name (agent_info.csv left out: the database keeps only a few agent fields).
func csvFiles(t *testing.T, spools, out string) map[string]string {
	t.Helper()
	_, err := output.Write(output.Config{Dir: out, PrefixTemplate: "run", Formats: []output.Format{output.FormatCSV}}, spools)
	require.NoError(t, err)
	return readCSVs(t, out)
}

func readCSVs(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") || strings.HasSuffix(e.Name(), "agent_info.csv") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The done-when: converting the run's database gives the same CSV
// rows and columns as writing CSV during the run — through the record
// stream (database → spool → CSV writer) and through convert's own CSV.
func TestConvertGivesTheRunsCSV(t *testing.T) {
	run := t.TempDir()
	runSpool(t, run, 4242, 24)
	runSpool(t, run, 4243, 9)
	duringRun := csvFiles(t, run, t.TempDir())
	require.Equal(t, []string{"run_counter_collection.csv", "run_hip_api_trace.csv", "run_hsa_api_trace.csv",
		"run_kernel_trace.csv", "run_marker_api_trace.csv", "run_memory_allocation_trace.csv",
		"run_memory_copy_trace.csv", "run_scratch_memory_trace.csv"}, keys(duringRun))

	// The run's database, one per process as rocprofv3's default layout.
	spools, err := tracing.List(run)
	require.NoError(t, err)
	var dbs []*rocpd.DB
	for i, s := range spools {
		path := filepath.Join(t.TempDir(), "results.db")
		require.NoError(t, output.WriteROCpd(path, &output.Input{Spools: []string{s}}), i)
		db, err := rocpd.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}

	back := t.TempDir()
	paths, err := convert.Spools(back, dbs)
	require.NoError(t, err)
	require.Len(t, paths, 2)
	viaStream := csvFiles(t, back, t.TempDir())
	for _, name := range keys(duringRun) {
		require.Equal(t, duringRun[name], viaStream[name], name)
	}
	require.Equal(t, keys(duringRun), keys(viaStream))

	// The same through Run, which CLI convert calls.
	out := t.TempDir()
	_, err = convert.Run(dbs, convert.Options{Formats: csvOnly, Dir: out, Prefix: "run"})
	require.NoError(t, err)
	viaRun := readCSVs(t, out)
	require.Equal(t, duringRun, viaRun)
}

// A database converted to a database summarises like the original, and the
// other formats are written.
func TestConvertToOtherFormats(t *testing.T) {
	dbs := openSample(t, 0, 1)
	dir := t.TempDir()
	res, err := convert.Run(dbs, convert.Options{Formats: []output.Format{output.FormatROCpd, output.FormatJSON,
		output.FormatPerfetto}, Dir: dir, Prefix: "conv"})
	require.NoError(t, err)
	require.Equal(t, 2, res.Spools)
	require.Equal(t, []string{filepath.Join(dir, "conv_results.db"), filepath.Join(dir, "conv_results.json"),
		filepath.Join(dir, "conv_results.pftrace")}, res.Paths)
	for _, p := range res.Paths {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
	before, err := summary.Build([]string{dbs[0].Path, dbs[1].Path}, summary.Options{})
	require.NoError(t, err)
	after, err := summary.Build([]string{res.Paths[0]}, summary.Options{})
	require.NoError(t, err)
	round(&before.Total)
	round(&after.Total)
	require.Equal(t, before.Total.Tables, after.Total.Tables)
}
