package output

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	csvout "github.com/rocprof-go/rocprof-go/internal/output/csv"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const csvGoldenDir = "../../testdata/output/csv"

// csvFixture writes a spool with records of every domain for one process.
func csvFixture(t testing.TB, dir string, pid int32) {
	b := spooltest.New(tracing.ProcessInfo{PID: pid, PPID: 1, PGID: pid, SID: pid,
		StartBoottimeNs: uint64(pid), Hostname: "node01", Argv: []string{"./app"}})
	hip := func(fn uint32, corr, start, end uint64) tracing.APICall {
		return tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: fn, TID: uint32(pid) + 1,
			CorrelationID: corr, Start: start, End: end}
	}
	b.Add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: 1, Value: []byte("hipMalloc")})
	b.Add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: 2, Value: []byte("hipLaunchKernel")})
	b.Add(tracing.String{Table: uint32(tracing.DomainHSACore), ID: 5, Value: []byte("hsa_agent_get_info")})
	b.Add(tracing.String{Table: tracing.TableCounter, ID: 3, Value: []byte("GRBM_COUNT")})
	b.Add(outputtest.Agent(0, 0, 0, tracing.AgentCPU, "AMD EPYC"))
	b.Add(outputtest.Agent(2, 2, 1, tracing.AgentGPU, "gfx90a"))
	b.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gfx908"))
	b.Add(tracing.KernelSymbol{KernelID: 1, CodeObjectID: 1, GroupSegmentSize: 100,
		VGPRCount: 8, AGPRCount: 4, SGPRCount: 16, Name: []byte("_Z15addition_kernelPfPKfS1_ii.kd")})
	b.Add(tracing.KernelSymbol{KernelID: 2, CodeObjectID: 1, GroupSegmentSize: 0,
		VGPRCount: 32, SGPRCount: 24, Name: []byte("__amd_rocclr_copyBuffer.kd")})
	b.Add(hip(1, 1, 1000, 1500))
	b.Add(hip(2, 2, 2000, 2100))
	b.Add(hip(2, 4, 3000, 3300))
	b.Add(hip(9, 5, 3400, 3401)) // a function nobody named
	b.Add(tracing.APICall{Domain: tracing.DomainHIPCompiler, Function: 0, TID: uint32(pid),
		CorrelationID: 6, Start: 10, End: 20})
	b.NewChunk() // another thread
	b.Add(tracing.APICall{Domain: tracing.DomainHSACore, Function: 5, TID: uint32(pid) + 2,
		CorrelationID: 3, Start: 2010, End: 2020})
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange,
		TID: uint32(pid), CorrelationID: 7, Start: 900, End: 4000, Message: []byte("main loop")})
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerMark,
		TID: uint32(pid), CorrelationID: 8, Start: 950, End: 950, Message: []byte("checkpoint")})
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerControl, Function: tracing.MarkerProfilerPause,
		TID: uint32(pid), CorrelationID: 9, Start: 960, End: 961})
	b.Add(tracing.KernelDispatch{AgentNode: 1, TID: uint32(pid) + 1, QueueID: 1, StreamID: 0,
		DispatchID: 1, KernelID: 1, CorrelationID: 2, Start: 2200, End: 2900,
		Grid: [3]uint32{1024, 1, 1}, Workgroup: [3]uint32{64, 1, 1}, PrivateSegmentSize: 16})
	b.Add(tracing.KernelDispatch{AgentNode: 2, TID: uint32(pid) + 1, QueueID: 2, StreamID: 7,
		DispatchID: 2, KernelID: 2, CorrelationID: 4, Start: 3100, End: 3150,
		Grid: [3]uint32{256, 4, 2}, Workgroup: [3]uint32{16, 4, 1}})
	b.Add(tracing.MemoryCopy{Direction: tracing.CopyHostToDevice, SrcAgentNode: 0, DstAgentNode: 1,
		Bytes: 4096, StreamID: 0, CorrelationID: 1, Start: 1100, End: 1400})
	b.Add(tracing.MemoryCopy{Direction: tracing.CopyDeviceToHost, SrcAgentNode: 1, DstAgentNode: 0,
		Bytes: 4096, StreamID: 7, CorrelationID: 10, Start: 5000, End: 5100})
	b.Add(tracing.MemoryAllocation{Operation: tracing.AllocAllocate, AgentNode: 1,
		Address: 0x7ffb26354000, Size: 1 << 20, CorrelationID: 1, Start: 1000, End: 1200})
	b.Add(tracing.MemoryAllocation{Operation: tracing.AllocFree, AgentNode: 1, Address: 0,
		Size: 0, CorrelationID: 11, Start: 6000, End: 6001})
	b.Add(tracing.ScratchMemory{Operation: tracing.ScratchAlloc, AgentNode: 2, TID: uint32(pid) + 1,
		Flags: 1, QueueID: 2, Size: 65536, Start: 3090, End: 3095})
	// Two dimension instances of one counter are summed; counters print in id order.
	b.Add(tracing.CounterSample{DispatchID: 1, CounterID: 7, Value: 0.25, AgentNode: 1,
		Name: []byte("SQ_WAVES"), Dims: []tracing.CounterDim{{DimensionID: 1, Index: 0}}})
	b.Add(tracing.CounterSample{DispatchID: 1, CounterID: 7, Value: 16383.75, AgentNode: 1,
		Name: []byte("SQ_WAVES"), Dims: []tracing.CounterDim{{DimensionID: 1, Index: 1}}})
	b.Add(tracing.CounterSample{DispatchID: 1, CounterID: 3, Value: 0, AgentNode: 1})
	b.AddTorn(hip(1, 99, 9000, 9001))
	_, err := b.WriteFile(dir)
	require.NoError(t, err)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(csvGoldenDir, name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll(csvGoldenDir, 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./internal/output -run CSV -update")
	require.Equal(t, string(want), got, "%s differs from %s (rerun with -update if intended)", name, path)
}

func TestCSVGolden(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	// The variants only keep goldens of the files their options change.
	labelled := []string{"out_kernel_trace.csv", "out_memory_copy_trace.csv",
		"out_counter_collection.csv"}
	cases := []struct {
		name string
		cfg  model.Config
		only []string
	}{
		{"default", model.Config{Formats: []model.Format{model.FormatCSV}, Stats: true, PrefixTemplate: "out"}, nil},
		{"mangled.absolute", model.Config{Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "out",
			MangledKernels: true, AgentIndex: model.AgentIndexAbsolute}, labelled},
		{"truncated.type-relative", model.Config{Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "out",
			TruncateKernels: true, AgentIndex: model.AgentIndexTypeRelative}, labelled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			tc.cfg.Dir = out
			res, err := Write(tc.cfg, spools)
			require.NoError(t, err)
			files := outputtest.ReadTree(t, out)
			var names []string
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			if tc.only != nil {
				names = tc.only
			}
			for _, n := range names {
				checkGolden(t, tc.name+"."+n, files[n])
			}
			require.Len(t, res.Files, len(files))
			require.Len(t, res.Processes, 1)
			require.Equal(t, uint64(1), res.Processes[0].Torn)
			for _, f := range res.Files {
				require.Equal(t, int64(len(files[filepath.Base(f.Path)])), f.Bytes, f.Path)
				require.Equal(t, uint64(strings.Count(files[filepath.Base(f.Path)], "\n")-1), f.Records)
			}
		})
	}
}

func TestCSVFileSetAndCounts(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	out := t.TempDir()
	res, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, Stats: true,
		PrefixTemplate: "out"}, spools)
	require.NoError(t, err)
	byName := map[string]model.File{}
	for _, f := range res.Files {
		byName[f.Name] = f
		require.Equal(t, filepath.Join(out, "out_"+f.Name+".csv"), f.Path)
	}
	want := map[string]uint64{"kernel_trace": 2, "hsa_api_trace": 1, "hip_api_trace": 5,
		"memory_copy_trace": 2, "memory_allocation_trace": 2, "marker_api_trace": 3,
		"counter_collection": 2, "scratch_memory_trace": 1, "agent_info": 3,
		"kernel_stats": 2, "hsa_api_stats": 1, "hip_api_stats": 4, "memory_copy_stats": 2,
		"memory_allocation_stats": 2, "marker_api_stats": 3, "scratch_memory_stats": 1,
		"domain_stats": 7}
	got := map[string]uint64{}
	for n, f := range byName {
		got[n] = f.Records
	}
	require.Equal(t, want, got)
	require.Equal(t, "KERNEL_DISPATCH", byName["kernel_trace"].Domain)
}

func TestCSVGroupsProcessesByPrefix(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	csvFixture(t, spools, 200)

	// Default prefix: one set of files per process.
	out := t.TempDir()
	_, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}}, spools)
	require.NoError(t, err)
	files := outputtest.ReadTree(t, out)
	require.Contains(t, files, "node01/100_kernel_trace.csv")
	require.Contains(t, files, "node01/200_kernel_trace.csv")

	// One prefix for both: one set, told apart by Process_Id.
	out = t.TempDir()
	res, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "all"}, spools)
	require.NoError(t, err)
	files = outputtest.ReadTree(t, out)
	hip := files["all_hip_api_trace.csv"]
	require.Equal(t, 1+2*5, strings.Count(hip, "\n"))
	require.Contains(t, hip, `,100,101,`)
	require.Contains(t, hip, `,200,201,`)
	require.Equal(t, 1+3, strings.Count(files["all_agent_info.csv"], "\n"), "agents listed once")
	require.Len(t, res.Processes, 2)
}

func TestCSVMinimumOutputBytes(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	out := t.TempDir()
	// The HIP domain holds 5 records of 48 bytes; the HSA domain one.
	_, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "o",
		MinimumOutputBytes: 200}, spools)
	require.NoError(t, err)
	files := outputtest.ReadTree(t, out)
	require.Contains(t, files, "o_hip_api_trace.csv")
	require.NotContains(t, files, "o_hsa_api_trace.csv")
	require.Contains(t, files, "o_agent_info.csv")

	out = t.TempDir()
	res, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "o",
		MinimumOutputBytes: 1 << 30}, spools)
	require.NoError(t, err)
	require.Empty(t, res.Files)
	require.Empty(t, outputtest.ReadTree(t, out))
}

func TestCSVStatsWithoutCSVFormat(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	out := t.TempDir()
	_, err := Write(model.Config{Dir: out, Formats: []model.Format{"rocpd"}, Stats: true, PrefixTemplate: "o"}, spools)
	require.NoError(t, err)
	files := outputtest.ReadTree(t, out)
	require.Contains(t, files, "o_kernel_stats.csv")
	require.Contains(t, files, "o_domain_stats.csv")
	require.NotContains(t, files, "o_kernel_trace.csv")
	require.NotContains(t, files, "o_agent_info.csv")
}

// fullFS fails every write with ENOSPC, as a full disk would, after the
// first after bytes.
type fullFS struct {
	model.OSFS
	after int
}

type fullFile struct {
	model.OutputFile
	left int
}

func (w *fullFile) Write(p []byte) (int, error) {
	if len(p) <= w.left {
		w.left -= len(p)
		return w.OutputFile.Write(p)
	}
	n, _ := w.OutputFile.Write(p[:w.left])
	w.left = 0
	return n, syscall.ENOSPC
}

func (fs fullFS) Create(path string) (model.OutputFile, error) {
	f, err := fs.OSFS.Create(path)
	if err != nil {
		return nil, err
	}
	return &fullFile{OutputFile: f, left: fs.after}, nil
}

func TestCSVDiskFull(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	for _, after := range []int{0, 100, 500} {
		out := t.TempDir()
		res, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "o",
			FS: fullFS{after: after}}, spools)
		require.Error(t, err)
		require.True(t, errors.Is(err, syscall.ENOSPC))
		require.Contains(t, err.Error(), filepath.Join(out, "o_kernel_trace.csv"))
		// No file is left under its name half-written, and no temporary
		// file is left at all; the files that fitted are complete.
		ents, err := os.ReadDir(out)
		require.NoError(t, err)
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(out, e.Name()))
			require.NoError(t, err)
			require.LessOrEqual(t, len(data), after, "%s was written whole", e.Name())
			require.False(t, strings.HasPrefix(e.Name(), "."), "temporary file left: %s", e.Name())
		}
		for _, f := range res.Files {
			require.FileExists(t, f.Path, "every listed file exists")
		}
		require.NoFileExists(t, filepath.Join(out, "o_kernel_trace.csv"))
	}
}

func TestCSVSkipsUnfinishedSpool(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	// A process killed while creating its spool leaves a file without magic.
	require.NoError(t, os.WriteFile(filepath.Join(spools, "rpg-5-5-0.spool"),
		make([]byte, tracing.ChunkSize), 0o600))
	res, err := Write(model.Config{Dir: t.TempDir(), Formats: []model.Format{model.FormatCSV}}, spools)
	require.NoError(t, err)
	require.Len(t, res.Skipped, 1)
	require.Contains(t, res.Skipped[0], "rpg-5-5-0.spool")
}

func TestCSVStatsMath(t *testing.T) {
	var s model.NamedStat
	for _, d := range []uint64{10, 20, 30, 40} {
		s.Add(model.SpanUnsigned(100, 100+d))
	}
	require.Equal(t, uint64(100), s.Sum)
	require.Equal(t, uint64(10), s.Min)
	require.Equal(t, uint64(40), s.Max)
	require.InDelta(t, 25.0, s.Mean(), 1e-12)
	require.InDelta(t, 12.909944487358056, s.StdDev(), 1e-9) // sample stddev
	var one model.NamedStat
	one.Add(model.SpanUnsigned(0, 5))
	require.Zero(t, one.StdDev())
}

func TestCSVCounterWithoutDispatchRecord(t *testing.T) {
	spools := t.TempDir()
	b := spooltest.New(tracing.ProcessInfo{PID: 7, StartBoottimeNs: 7})
	b.Add(tracing.CounterSample{DispatchID: 99, CounterID: 1, Value: 2, AgentNode: 1,
		Name: []byte("SQ_WAVES")})
	_, err := b.WriteFile(spools)
	require.NoError(t, err)
	out := t.TempDir()
	_, err = Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "o"}, spools)
	require.NoError(t, err)
	files := outputtest.ReadTree(t, out)
	require.Equal(t, csvHeaderLine(csvout.Headers[model.DomCounter])+
		`0,99,"Agent 0",0,7,0,0,0,"unknown_kernel",0,0,0,0,0,0,"SQ_WAVES",2.000000,0,0`+"\n",
		files["o_counter_collection.csv"])
}

func csvHeaderLine(cols []string) string {
	return `"` + strings.Join(cols, `","`) + "\"\n"
}

func TestCSVOmitKernelTrace(t *testing.T) {
	dir := t.TempDir()
	spools := t.TempDir()
	b := spooltest.New(tracing.ProcessInfo{PID: 7, Hostname: "h"})
	b.Add(&tracing.KernelDispatch{DispatchID: 1, KernelID: 1, Start: 10, End: 20, Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}})
	_, err := b.WriteFile(spools)
	require.NoError(t, err)
	res, err := Write(model.Config{Dir: dir, PrefixTemplate: "o", Formats: []model.Format{model.FormatCSV}, Stats: true, OmitKernelTrace: true}, spools)
	require.NoError(t, err)
	require.Empty(t, res.Files, "no domain file, and no per-run file for a run whose only records are omitted")
	for _, f := range res.Files {
		require.NotEqual(t, "kernel_trace", f.Name)
		require.NotEqual(t, "kernel_stats", f.Name)
	}
}

// Result.Groups is what the launcher hands the other writers: the same
// groups, counts and sizes whether Write wrote CSV files or only counted.
func TestCSVResultGroups(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	csvFixture(t, spools, 200)

	var want []model.Group
	for _, cfg := range []model.Config{
		{Formats: []model.Format{model.FormatCSV}, PrefixTemplate: "all"},
		{Formats: []model.Format{FormatJSON}, PrefixTemplate: "all", CountEvents: true},
		{Stats: true, PrefixTemplate: "all"},
	} {
		cfg.Dir = t.TempDir()
		res, err := Write(cfg, spools)
		require.NoError(t, err)
		require.Len(t, res.Groups, 1)
		g := res.Groups[0]
		require.Equal(t, filepath.Join(cfg.Dir, "all"), g.Prefix)
		require.Len(t, g.Spools, 2)
		require.Equal(t, []int32{100, 200}, []int32{g.Processes[0].PID, g.Processes[1].PID})
		var events, bytes uint64
		for _, path := range g.Spools {
			r, err := tracing.Open(path)
			require.NoError(t, err)
			for r.Next() {
				if model.KindDomain(r.Kind()) >= 0 {
					events++
					bytes += uint64(len(r.Bytes()))
				}
			}
			require.NoError(t, r.Close())
		}
		require.NotZero(t, events)
		require.Equal(t, events, g.Events)
		require.Equal(t, bytes, g.Bytes)
		g.Prefix = ""
		if want == nil {
			want = []model.Group{g}
		}
		require.Equal(t, want, []model.Group{g})
	}

	// With nothing to write and without CountEvents, Write reads nothing.
	res, err := Write(model.Config{Dir: t.TempDir()}, spools)
	require.NoError(t, err)
	require.Empty(t, res.Groups)

	// The default prefix: one group per process.
	res, err = Write(model.Config{Dir: t.TempDir(), CountEvents: true}, spools)
	require.NoError(t, err)
	require.Len(t, res.Groups, 2)
}
