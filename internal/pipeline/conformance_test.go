package pipeline

// rocprofv3 conformance (issue 24): each test runs hip_calls_conformance (the
// situations of rocprofv3's own integration tests, testdata/apps) on the
// virtual GPU and reads the files as rocprofv3's validate.py scripts read
// rocprofv3's.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// conformanceRun profiles one mode of hip_calls_conformance with the given
// options into a fresh directory, prefix "out", and returns the directory.
func conformanceRun(t *testing.T, mode string, args ...string) string {
	return conformanceRunApp(t, []string{mode}, args...)
}

// conformanceRunApp is conformanceRun with arguments for the app.
func conformanceRunApp(t *testing.T, appArgs []string, args ...string) string {
	t.Helper()
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_conformance")
	out := t.TempDir()
	all := append([]string{"--virtual-gpu", "-d", out, "-o", "out"}, args...)
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Args: all}, append([]string{app}, appArgs...))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	return out
}

// resultsJSON decodes out_results.json's one process into v.
func resultsJSON(t *testing.T, dir string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "out_results.json"))
	require.NoError(t, err)
	var doc struct {
		Tool []json.RawMessage `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Len(t, doc.Tool, 1)
	require.NoError(t, json.Unmarshal(doc.Tool[0], v))
}

func atoiT(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, "%q", s)
	return v
}

type handle struct {
	Handle uint64 `json:"handle"`
}

// Point 1: kernel_symbols and code_objects are indexed by id (an empty entry
// at 0), so data["kernel_symbols"][kernel_id] is the dispatch's kernel, as
// rocprofv3's tracing test reads it. Point 2: kernel-dispatch and
// counter-collection records carry stream_id.
func TestConformanceJSONIndexedByIDWithStreams(t *testing.T) {
	out := conformanceRun(t, "threads", "--kernel-trace", "--pmc", "SQ_WAVES", "-f", "json", "csv")
	var p struct {
		Symbols []struct {
			KernelID     uint64 `json:"kernel_id"`
			CodeObjectID uint64 `json:"code_object_id"`
			Name         string `json:"kernel_name"`
			Formatted    string `json:"formatted_kernel_name"`
		} `json:"kernel_symbols"`
		CodeObjects []struct {
			ID  uint64 `json:"code_object_id"`
			URI string `json:"uri"`
		} `json:"code_objects"`
		HostFunctions []struct {
			ID           uint64 `json:"host_function_id"`
			KernelID     uint64 `json:"kernel_id"`
			CodeObjectID uint64 `json:"code_object_id"`
			Host         handle `json:"host_function"`
			Device       string `json:"device_function"`
			Formatted    string `json:"formatted_host_function_name"`
		} `json:"host_functions"`
		Buffer struct {
			Dispatches []struct {
				Info struct {
					KernelID uint64 `json:"kernel_id"`
				} `json:"dispatch_info"`
				Stream *handle `json:"stream_id"`
			} `json:"kernel_dispatch"`
		} `json:"buffer_records"`
		Callback struct {
			Counters []struct {
				Stream *handle `json:"stream_id"`
			} `json:"counter_collection"`
		} `json:"callback_records"`
	}
	resultsJSON(t, out, &p)
	require.NotEmpty(t, p.Symbols)
	require.Zero(t, p.Symbols[0].KernelID, "entry 0 is rocprofv3's empty entry")
	require.Empty(t, p.Symbols[0].Name)
	for i, s := range p.Symbols[1:] {
		if s.KernelID != 0 {
			require.EqualValues(t, i+1, s.KernelID, "kernel_symbols[%d]", i+1)
			require.Less(t, s.CodeObjectID, uint64(len(p.CodeObjects)))
			require.Equal(t, s.CodeObjectID, p.CodeObjects[s.CodeObjectID].ID)
		}
	}
	require.Zero(t, p.CodeObjects[0].ID)
	streams := map[uint64]bool{}
	require.NotEmpty(t, p.Buffer.Dispatches)
	for _, d := range p.Buffer.Dispatches {
		require.Less(t, d.Info.KernelID, uint64(len(p.Symbols)))
		require.Equal(t, d.Info.KernelID, p.Symbols[d.Info.KernelID].KernelID)
		require.NotNil(t, d.Stream, "kernel_dispatch records carry stream_id")
		streams[d.Stream.Handle] = true
	}
	require.Contains(t, p.Symbols[p.Buffer.Dispatches[0].Info.KernelID].Formatted, "scale")
	// Each thread launches on its own stream: two stream ids besides none.
	delete(streams, 0)
	require.Len(t, streams, 2)
	require.NotEmpty(t, p.Callback.Counters)
	for _, c := range p.Callback.Counters {
		require.NotNil(t, c.Stream, "counter_collection records carry stream_id")
		require.NotZero(t, c.Stream.Handle)
	}

	// Point 4: host_functions, indexed by id like kernel_symbols, one per
	// kernel HIP registered (__hipRegisterFunction), each naming its host
	// stub and its kernel symbol.
	require.Greater(t, len(p.HostFunctions), 1)
	require.Zero(t, p.HostFunctions[0].ID, "entry 0 is rocprofv3's empty entry")
	named := map[string]bool{}
	for i, h := range p.HostFunctions[1:] {
		require.EqualValues(t, i+1, h.ID)
		require.NotZero(t, h.Host.Handle, "the host stub's address")
		require.NotZero(t, h.KernelID, "%s is a kernel symbol", h.Device)
		require.Equal(t, h.Device, strings.TrimSuffix(p.Symbols[h.KernelID].Name, ".kd"))
		require.Equal(t, p.Symbols[h.KernelID].CodeObjectID, h.CodeObjectID)
		named[h.Formatted] = true
	}
	require.Contains(t, named, "scale(float*, float, int)")
}

// Point 5: as in rocprofv3's simple-transpose test, a roctxProfilerPause
// (with the thread's id, not 0) stops all tracing until the Resume: the
// device-to-device copy made in between is in no trace, the two other
// copies are, and the markers are exactly main, roctxGetThreadId, the pause,
// the resume and the two marks.
func TestConformancePauseResumeAroundACopy(t *testing.T) {
	out := conformanceRun(t, "transpose", "--hsa-trace", "--kernel-trace", "--memory-copy-trace",
		"--marker-trace", "-f", "csv", "json", "rocpd")
	copies := readCSV(t, filepath.Join(out, "out_memory_copy_trace.csv"))
	require.Equal(t, []string{"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST"},
		column(copies, "Direction"), "the paused copy is absent; the rest in completion order")
	kernels := readCSV(t, filepath.Join(out, "out_kernel_trace.csv"))
	require.Equal(t, []string{"transpose(float*, float const*, int)"}, column(kernels, "Kernel_Name"),
		"no blit kernel of the paused copy either")
	require.Equal(t, []string{"4"}, column(kernels, "Workgroup_Size_X"))
	require.Equal(t, []string{"64"}, column(kernels, "Grid_Size_Y"))
	markers := column(readCSV(t, filepath.Join(out, "out_marker_api_trace.csv")), "Function")
	sort.Strings(markers)
	require.Equal(t, []string{"main", "post-kernel-launch", "pre-kernel-launch", "roctxGetThreadId",
		"roctxProfilerPause", "roctxProfilerResume"}, markers)
	hsa := readCSV(t, filepath.Join(out, "out_hsa_api_trace.csv"))
	pause, resume := markerTimes(t, out)
	for _, r := range hsa[1:] {
		start := atoiT(t, r[5])
		require.False(t, start > pause && start < resume, "HSA call %s at %d made during the pause", r[1], start)
	}
	var p struct {
		Buffer struct {
			Copies []struct {
				Op int `json:"operation"`
			} `json:"memory_copy"`
		} `json:"buffer_records"`
	}
	resultsJSON(t, out, &p)
	require.Len(t, p.Buffer.Copies, 2)
	db := filepath.Join(out, "out_results.db")
	require.Equal(t, "2", sqlite3(t, db, "SELECT COUNT(*) FROM memory_copies"))
	require.Equal(t, "1", sqlite3(t, db, "SELECT COUNT(*) FROM kernels"))
}

// markerTimes returns the end of the pause and the start of the resume.
func markerTimes(t *testing.T, dir string) (uint64, uint64) {
	rows := readCSV(t, filepath.Join(dir, "out_marker_api_trace.csv"))
	var pause, resume uint64
	for _, r := range rows[1:] {
		switch r[1] {
		case "roctxProfilerPause":
			pause = atoiT(t, r[6])
		case "roctxProfilerResume":
			resume = atoiT(t, r[5])
		}
	}
	require.NotZero(t, pause)
	require.Greater(t, resume, pause)
	return pause, resume
}

// Point 6: --kernel-rename without --marker-trace renames after roctxMarkA
// too, as rocprofv3 does: the blit kernels of the copy after mark "first"
// and the kernels outside the range take "first", the kernel in the range
// "range", the one after mark "second" that name.
func TestConformanceRenameByMarkWithoutMarkerTrace(t *testing.T) {
	out := conformanceRun(t, "mark-rename", "--kernel-rename", "--kernel-trace", "-f", "csv", "json")
	names := column(readCSV(t, filepath.Join(out, "out_kernel_trace.csv")), "Kernel_Name")
	require.GreaterOrEqual(t, len(names), 5, "the copy's blit kernels and four kernels: %v", names)
	n := len(names)
	require.Equal(t, []string{"first", "range", "first", "second"}, names[n-4:])
	for _, name := range names[:n-4] {
		require.Equal(t, "first", name, "blit kernels of the copy after the mark: %v", names)
	}
	for _, f := range listFiles(t, out) {
		require.NotContains(t, f, "marker", "no marker output without --marker-trace")
	}
}

// Point 7: correlation ids number the traced calls 1..N in start order, as
// rocprofv3's tracing test checks with --hsa-trace: roctxRangePush is 1, the
// first HSA call 2; every id once; the same numbers in CSV and JSON; the
// kernel and the copies point to ids no API row uses twice.
func TestConformanceCorrelationIDsAreDense(t *testing.T) {
	out := conformanceRun(t, "transpose", "--hsa-trace", "--kernel-trace", "--memory-copy-trace",
		"--marker-trace", "-f", "csv", "json")
	type row struct{ id, start uint64 }
	var calls []row
	seen := map[uint64]bool{}
	for _, file := range []string{"out_hsa_api_trace.csv", "out_marker_api_trace.csv"} {
		rows := readCSV(t, filepath.Join(out, file))
		for _, r := range rows[1:] {
			id := atoiT(t, r[4])
			require.False(t, seen[id], "id %d used twice", id)
			seen[id] = true
			calls = append(calls, row{id, atoiT(t, r[5])})
		}
	}
	hsa := readCSV(t, filepath.Join(out, "out_hsa_api_trace.csv"))
	minHSA := ^uint64(0)
	for _, r := range hsa[1:] {
		minHSA = min(minHSA, atoiT(t, r[4]))
	}
	require.EqualValues(t, 2, minHSA, "roctxRangePush is 1, the first HSA call 2")
	sort.Slice(calls, func(i, j int) bool { return calls[i].id < calls[j].id })
	require.EqualValues(t, 1, calls[0].id)
	for i := 1; i < len(calls); i++ {
		require.LessOrEqual(t, calls[i-1].start, calls[i].start, "ids follow the calls' starts")
	}
	// Gaps are only the ids of things that are no API row: the pop of
	// "main", and the calls behind the kernel and copies (HIP is untraced
	// here; rocprof-go numbers them, see docs/outputs.md).
	var others []uint64
	for _, f := range []struct{ file, col string }{{"out_kernel_trace.csv", "Correlation_Id"},
		{"out_memory_copy_trace.csv", "Correlation_Id"}} {
		for _, v := range column(readCSV(t, filepath.Join(out, f.file)), f.col) {
			others = append(others, atoiT(t, v))
		}
	}
	last := calls[len(calls)-1].id
	var gaps []uint64
	for id := uint64(1); id <= last; id++ {
		if !seen[id] {
			gaps = append(gaps, id)
		}
	}
	require.LessOrEqual(t, len(gaps), len(others)+1, "gaps %v, dispatch and copy ids %v", gaps, others)
	for _, id := range others {
		require.False(t, seen[id], "a copy or dispatch id is no API call's")
	}
	var p struct {
		Buffer map[string][]struct {
			Corr struct {
				Internal uint64 `json:"internal"`
			} `json:"correlation_id"`
		} `json:"buffer_records"`
	}
	resultsJSON(t, out, &p)
	var jsonIDs []string
	for _, r := range p.Buffer["hsa_api"] {
		jsonIDs = append(jsonIDs, strconv.FormatUint(r.Corr.Internal, 10))
	}
	require.Equal(t, column(hsa, "Correlation_Id"), jsonIDs, "the same ids, in the same order")
}

// Point 8: the summary in results.json as rocprofv3's summary test reads it:
// metadata.config.summary* and stats.operations as a list of {key, value}.
func TestConformanceSummaryJSON(t *testing.T) {
	out := conformanceRun(t, "transpose", "--hip-trace", "--kernel-trace", "--summary",
		"--summary-per-domain", "--summary-groups", "KERNEL_DISPATCH|MEMORY_COPY", ".*_API",
		"--summary-output-file", "summary", "-f", "json")
	var p struct {
		Metadata struct {
			Config struct {
				Summary          bool     `json:"summary"`
				SummaryPerDomain bool     `json:"summary_per_domain"`
				SummaryUnit      string   `json:"summary_unit"`
				SummaryFile      string   `json:"summary_file"`
				SummaryGroups    []string `json:"summary_groups"`
			} `json:"config"`
		} `json:"metadata"`
		Summary []struct {
			Domain string `json:"domain"`
			Stats  struct {
				Count      uint64 `json:"count"`
				Operations []struct {
					Key   string `json:"key"`
					Value struct {
						Count uint64 `json:"count"`
					} `json:"value"`
				} `json:"operations"`
			} `json:"stats"`
		} `json:"summary"`
	}
	resultsJSON(t, out, &p)
	c := p.Metadata.Config
	require.True(t, c.Summary)
	require.True(t, c.SummaryPerDomain)
	require.Equal(t, "nsec", c.SummaryUnit)
	require.Equal(t, "summary", c.SummaryFile)
	require.Equal(t, []string{"KERNEL_DISPATCH|MEMORY_COPY", ".*_API"}, c.SummaryGroups)
	found := false
	for _, s := range p.Summary {
		if s.Domain != "KERNEL_DISPATCH" {
			continue
		}
		found = true
		// Without --marker-trace the pause does nothing (as in rocprofv3):
		// the device-to-device copy's blit kernel is there too. Keys in
		// order, as rocprofv3's std::map gives them.
		var keys []string
		for _, o := range s.Stats.Operations {
			keys = append(keys, o.Key)
			require.EqualValues(t, 1, o.Value.Count)
		}
		require.Equal(t, []string{"__amd_rocclr_copyBuffer", "transpose(float*, float const*, int)"}, keys)
	}
	require.True(t, found)
}

// Point 9: memory allocation addresses are hex strings in JSON, as in
// rocprofv3 ("0x" and 16 digits), the same as the CSV's Address column.
func TestConformanceAllocationAddressIsHex(t *testing.T) {
	out := conformanceRun(t, "transpose", "--memory-allocation-trace", "-f", "json", "csv")
	var p struct {
		Buffer struct {
			Allocs []struct {
				Address json.RawMessage `json:"address"`
			} `json:"memory_allocation"`
		} `json:"buffer_records"`
	}
	resultsJSON(t, out, &p)
	require.NotEmpty(t, p.Buffer.Allocs)
	var fromJSON []string
	for _, a := range p.Buffer.Allocs {
		var s string
		require.NoError(t, json.Unmarshal(a.Address, &s), "address %s is a string", a.Address)
		require.Regexp(t, `^0x[0-9a-f]{16,}$`, s)
		fromJSON = append(fromJSON, s)
	}
	require.Equal(t, column(readCSV(t, filepath.Join(out, "out_memory_allocation_trace.csv")), "Address"), fromJSON)
}

// Point 12: two threads copying at once: every file lists copies (and
// kernels, and HIP calls) in completion order, whichever thread recorded
// them, as rocprofv3's buffers deliver them.
func TestConformanceConcurrentCopiesInCompletionOrder(t *testing.T) {
	out := conformanceRunApp(t, []string{"threads", "16"}, "--hip-trace", "--kernel-trace", "--memory-copy-trace",
		"-f", "csv", "json", "rocpd")
	ends := func(file string) []uint64 {
		var v []uint64
		for _, s := range column(readCSV(t, filepath.Join(out, file)), "End_Timestamp") {
			v = append(v, atoiT(t, s))
		}
		return v
	}
	copies := ends("out_memory_copy_trace.csv")
	require.Len(t, copies, 64, "16 rounds of 2 copies on each of 2 threads")
	for _, file := range []string{"out_memory_copy_trace.csv", "out_kernel_trace.csv", "out_hip_api_trace.csv"} {
		e := ends(file)
		require.True(t, sort.SliceIsSorted(e, func(i, j int) bool { return e[i] < e[j] }), "%s in end order", file)
	}
	threads := uniq(column(readCSV(t, filepath.Join(out, "out_memory_copy_trace.csv")), "Stream_Id"))
	require.Len(t, threads, 2, "copies of both threads' streams")
	var p struct {
		Buffer map[string][]struct {
			End uint64 `json:"end_timestamp"`
		} `json:"buffer_records"`
	}
	resultsJSON(t, out, &p)
	var jsonEnds []uint64
	for _, c := range p.Buffer["memory_copy"] {
		jsonEnds = append(jsonEnds, c.End)
	}
	require.Equal(t, copies, jsonEnds)
	db := filepath.Join(out, "out_results.db")
	dbEnds := strings.Split(sqlite3(t, db, "SELECT end FROM memory_copies ORDER BY id"), "\n")
	var csvEnds []string
	for _, e := range copies {
		csvEnds = append(csvEnds, strconv.FormatUint(e, 10))
	}
	require.Equal(t, csvEnds, dbEnds, "ROCpd rows in completion order too")
}

// Point 11: Ctrl-C with two dispatches in flight. rocprofv3's signal handler
// finalizes and keeps them; rocprof-go's shim waits for them to complete
// before the app dies of the SIGINT rocprof-go forwarded, so both are in the
// kernel trace (18 HIP calls kept and 0 of 2 dispatches before).
func TestConformanceSIGINTKeepsDispatchesInFlight(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_conformance")
	cli := filepath.Join(filepath.Dir(filepath.Dir(app)), "rocprof-go")
	out := t.TempDir()
	cmd := exec.Command(cli, "--virtual-gpu", "--hip-trace", "--kernel-trace", "-f", "csv", "json",
		"-d", out, "-o", "out", "--", app, "inflight")
	// Each dispatch lasts about 1 s on the virtual GPU: in flight when the
	// app says so.
	cmd.Env = append(os.Environ(), "ROCPROF_VGPU_KERNEL_SCALE=*conformance_slow*=500000")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "in flight" {
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	for lines.Scan() {
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr:\n%s", stderr.String())
	require.Equal(t, 130, exit.ExitCode(), "the app died of SIGINT; stderr:\n%s", stderr.String())
	kernels := readCSV(t, filepath.Join(out, "out_kernel_trace.csv"))
	require.Equal(t, []string{"conformance_slow(int*)", "conformance_slow(int*)"}, column(kernels, "Kernel_Name"))
	for _, r := range kernels[1:] {
		require.Greater(t, atoiT(t, r[10])-atoiT(t, r[9]), uint64(500_000_000), "ran to completion")
	}
	launches := 0
	for _, f := range column(readCSV(t, filepath.Join(out, "out_hip_api_trace.csv")), "Function") {
		if f == "hipLaunchKernel" {
			launches++
		}
	}
	require.Equal(t, 2, launches)
}

// rocprof v1 (5.2.3): without --stats or a trace option (its GEN_STATS),
// rocprof wrote results.csv alone, plain (tblextr.py's dump_csv: bare
// header, no DurationNs), and no stats file.
func TestConformanceV1WithoutStatsWritesResultsAlone(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_conformance")
	out := t.TempDir()
	input := filepath.Join(t.TempDir(), "input.txt")
	require.NoError(t, os.WriteFile(input, []byte("pmc: GRBM_COUNT SQ_WAVES\n"), 0o644))
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Args: []string{"--virtual-gpu",
		"-i", input, "-d", out, "-o", "results.csv"}}, []string{app, "transpose"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	require.Equal(t, []string{"results.csv"}, listFiles(t, out))
	raw, err := os.ReadFile(filepath.Join(out, "results.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Equal(t, "Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,vgpr,sgpr,"+
		"fbar,sig,obj,GRBM_COUNT,SQ_WAVES,DispatchNs,BeginNs,EndNs,CompleteNs", lines[0],
		"counters in the pmc: line's order")
	rows := readCSV(t, filepath.Join(out, "results.csv"))
	names := column(rows, "KernelName")
	require.Contains(t, names, "transpose(float*, float const*, int)")
	// queue-index is the packet's slot in its queue: it grows along a queue.
	last := map[string]int{}
	for _, r := range rows[1:] {
		q, idx := r[3], int(atoiT(t, r[4]))
		if prev, ok := last[q]; ok {
			require.Greater(t, idx, prev, "queue %s", q)
		}
		last[q] = idx
	}
	require.Contains(t, column(rows, "queue-id"), "0")
	// gfx90a, transpose: 8 VGPRs and 16 SGPRs in rocprofv3's counts (the
	// kernel trace); v1 printed (granulated + 1) × 4 and (granulated + 2) × 8.
	for i, n := range names {
		if strings.HasPrefix(n, "transpose") {
			require.Equal(t, "4", rows[i+1][11], "vgpr")
			require.Equal(t, "24", rows[i+1][12], "sgpr")
		}
	}
}

// Point 3: every OTF2 event carries rocprofv3's "category" string attribute,
// and regions counted per category match the JSON's records, as
// rocprofv3's shared OTF2 check counts them (otf2-print reads the archive).
func TestConformanceOTF2EventsCarryTheirCategory(t *testing.T) {
	out := conformanceRun(t, "transpose", "--hip-trace", "--kernel-trace", "--memory-copy-trace",
		"-f", "otf2", "json")
	dump, err := exec.Command("otf2-print", filepath.Join(out, "out_results.otf2")).CombinedOutput()
	require.NoError(t, err, "%s", dump)
	enters := map[string]int{}
	lines := strings.Split(string(dump), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "ENTER") {
			continue
		}
		require.Less(t, i+1, len(lines))
		attr := lines[i+1]
		require.Contains(t, attr, `ADDITIONAL ATTRIBUTES: ("category" <0>; STRING; "`, "event %q", l)
		cat := attr[strings.Index(attr, `STRING; "`)+len(`STRING; "`):]
		cat = cat[:strings.Index(cat, `"`)]
		enters[cat]++
	}
	var p struct {
		Buffer map[string][]json.RawMessage `json:"buffer_records"`
	}
	resultsJSON(t, out, &p)
	for _, cat := range []string{"hip_api", "kernel_dispatch", "memory_copy"} {
		require.NotZero(t, len(p.Buffer[cat]), cat)
		require.Equal(t, len(p.Buffer[cat]), enters[cat], "%s regions in OTF2 and records in JSON", cat)
	}
	require.Zero(t, enters["unk"])
}

// Point 10: with ROCPROF_COLLECTION_PERIOD_TESTING=true rocprofv3 writes
// <prefix>_collection_periods.log, the periods it applied: sections after
// "--", lines label:begin:end. Its test checks every recorded call against
// them; so does this one (with its 200 µs margin).
func TestConformanceCollectionPeriodsLog(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	t.Setenv("ROCPROF_COLLECTION_PERIOD_TESTING", "true")
	app := sampleApp(t, "hip_calls_period")
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Args: []string{"--virtual-gpu",
		"--hip-runtime-trace", "-f", "csv", "--collection-period", "200:60:3", "--collection-period-unit", "msec",
		"-d", out, "-o", "out"}}, []string{app, "1000"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	raw, err := os.ReadFile(filepath.Join(out, "out_collection_periods.log"))
	require.NoError(t, err)
	type window struct{ begin, end uint64 }
	var periods []map[string]window
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if l == "--" {
			periods = append(periods, map[string]window{})
			continue
		}
		f := strings.Split(l, ":")
		require.Len(t, f, 3, "line %q", l)
		require.NotEmpty(t, periods, "a section starts with --")
		w := window{atoiT(t, f[1]), atoiT(t, f[2])}
		require.LessOrEqual(t, w.begin, w.end, l)
		periods[len(periods)-1][f[0]] = w
	}
	require.Len(t, periods, 3, "three repeats of one period")
	for _, p := range periods {
		for _, label := range []string{"delay", "start", "duration", "stop"} {
			require.Contains(t, p, label)
		}
		require.LessOrEqual(t, p["delay"].end, p["start"].begin)
		require.LessOrEqual(t, p["start"].end, p["duration"].begin)
		require.LessOrEqual(t, p["duration"].end, p["stop"].begin)
	}
	const margin = 200_000 // rocprofv3's validate.py: 20 * 1e4 ns
	calls := readCSV(t, filepath.Join(out, "out_hip_api_trace.csv"))
	require.Greater(t, len(calls), 1)
	for _, r := range calls[1:] {
		start := atoiT(t, r[5])
		inside := false
		for _, p := range periods {
			if start+margin >= p["start"].begin && start <= p["stop"].end+margin {
				inside = true
			}
		}
		require.True(t, inside, "call %s at %d outside every logged period", r[1], start)
	}
}

// Also seen (issue 24): with --att and -d %argt%-trace, the raw traces, the
// code objects and results.json all land in the expanded directory, and
// the JSON names them in strings.att_filenames and
// code_object_snapshot_filenames (indexed by code object id), as
// rocprofv3's thread-trace test reads them.
func TestConformanceThreadTraceFilesInJSON(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_conformance")
	top := t.TempDir()
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Environ: append(os.Environ(), "LD_LIBRARY_PATH="),
		Args: []string{"--virtual-gpu", "--att", "--kernel-include-regex", "scale", "--kernel-trace",
			"-f", "json", "-d", filepath.Join(top, "%argt%-trace"), "-o", "out"}}, []string{app, "mark-rename"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	dir := filepath.Join(top, "hip_calls_conformance_mark-rename-trace")
	require.NoDirExists(t, filepath.Join(top, "%argt%-trace"))
	var p struct {
		Strings struct {
			ATT       []string `json:"att_filenames"`
			Snapshots []string `json:"code_object_snapshot_filenames"`
		} `json:"strings"`
		CodeObjects []struct {
			ID uint64 `json:"code_object_id"`
		} `json:"code_objects"`
	}
	resultsJSON(t, dir, &p)
	require.Len(t, p.Strings.ATT, 4, "scale runs four times")
	for _, f := range p.Strings.ATT {
		require.FileExists(t, filepath.Join(dir, f))
		require.True(t, strings.HasSuffix(f, ".att"))
	}
	require.NotEmpty(t, p.Strings.Snapshots)
	found := 0
	for id, f := range p.Strings.Snapshots {
		if f == "" {
			continue
		}
		found++
		require.FileExists(t, filepath.Join(dir, f))
		require.Contains(t, f, "_code_object_id_"+strconv.Itoa(id)+".out", "indexed by code object id")
	}
	require.NotZero(t, found)
}

// rocprofv3ExecuteDir runs hip_calls_conformance's transpose mode under
// one of rocprofv3's own test command lines (its "-execute" ctest: the
// options exactly as its CMakeLists.txt writes them, after --virtual-gpu)
// and returns the rocprof-go progress it printed.
func rocprofv3Execute(t *testing.T, args ...string) string {
	t.Helper()
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_conformance")
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &progress,
		Args: append([]string{"--virtual-gpu"}, args...)}, []string{app, "transpose"})
	require.NoError(t, err, progress.String())
	require.Equal(t, 0, res.ExitStatus, progress.String())
	return progress.String()
}

// noLiteralPlaceholders fails when a file or directory under dir is named
// with an unexpanded placeholder.
func noLiteralPlaceholders(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		require.NoError(t, err)
		require.NotContains(t, filepath.Base(p), "%", "an unexpanded placeholder names %s", p)
		return nil
	}))
}

// AMD's summary test (tests/rocprofv3/summary) sets
// ARBITRARY_ENV_VARIABLE=%tag%-trace-inp-yaml and runs its
// input-summary.yaml, whose job writes to
// <dir>/%env{ARBITRARY_ENV_VARIABLE}%; its validate.py reads
// <dir>/transpose-trace-inp-yaml/out_*: rocprofv3 expands the placeholders
// in a variable's value (issue 41: rocprof-go wrote to a directory named
// %tag%-trace-inp-yaml, and 7 of the test's checks failed). The
// command-line variant (-d <dir>/%tag%-trace-cmd-line) too.
func TestConformanceSummaryTestOutputDirectories(t *testing.T) {
	base := t.TempDir()
	t.Run("inp-yaml", func(t *testing.T) {
		t.Setenv("ARBITRARY_ENV_VARIABLE", "%tag%-trace-inp-yaml")
		yml := filepath.Join(t.TempDir(), "input-summary.yaml")
		require.NoError(t, os.WriteFile(yml, []byte(`jobs:
  - output_directory: "`+base+`/%env{ARBITRARY_ENV_VARIABLE}%"
    output_file: out
    output_format: [pftrace, json, otf2]
    log_level: env
    runtime_trace: True
    kernel_rename: True
    summary: True
    summary_per_domain: True
    summary_groups: ["KERNEL_DISPATCH|MEMORY_COPY"]
    summary_output_file: "summary"
`), 0o644))
		rocprofv3Execute(t, "-i", yml)
	})
	t.Run("cmd-line", func(t *testing.T) {
		t.Setenv("ARBITRARY_ENV_VARIABLE", "%tag%-trace-cmd-line")
		rocprofv3Execute(t, "-d", base+"/%tag%-trace-cmd-line", "-o", "out", "--output-format", "pftrace", "json", "otf2",
			"--log-level", "env", "--runtime-trace", "--kernel-rename", "--summary", "--summary-output-file", "summary",
			"--summary-per-domain", "--summary-groups", "KERNEL_DISPATCH|MEMORY_COPY", ".*_API")
	})
	for _, v := range []string{"inp-yaml", "cmd-line"} {
		dir := filepath.Join(base, "hip_calls_conformance-trace-"+v)
		for _, f := range []string{"out_results.json", "out_results.pftrace", "out_results.otf2", "out_summary.txt"} {
			require.FileExists(t, filepath.Join(dir, f))
		}
		var p struct {
			Summary []struct {
				Domain string `json:"domain"`
			} `json:"summary"`
		}
		resultsJSON(t, dir, &p)
		require.NotEmpty(t, p.Summary, v)
	}
	noLiteralPlaceholders(t, base)
	// run.json goes to the part of -d before the per-process %tag% (the
	// variable's value counts as written in its place), nowhere else.
	entries, err := os.ReadDir(base)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"hip_calls_conformance-trace-inp-yaml", "hip_calls_conformance-trace-cmd-line", "run.json"}, names)
}

// AMD's kernel-rename test (tests/rocprofv3/kernel-rename) passes every
// Perfetto option, --perfetto-shmem-size-hint 128 among them: rocprofv3
// accepts it, and so does rocprof-go, with a note (issue 41: it was
// refused, and 12 of the test's checks failed).
func TestConformanceKernelRenameTestCommandLine(t *testing.T) {
	base := t.TempDir()
	progress := rocprofv3Execute(t, "-M", "--sys-trace", "no", "--hsa-trace=0", "--hsa-core-trace=1", "--hip-compiler-trace", "False",
		"--hip-runtime-trace", "--kernel-trace", "--memory-copy-trace", "-d", base+"/%argt%-trace-cmd-line", "-o", "out",
		"--output-format", "pftrace", "json", "otf2", "--log-level", "env", "--kernel-rename",
		"--perfetto-shmem-size-hint", "128", "--perfetto-buffer-size", "2048000",
		"--perfetto-buffer-fill-policy", "ring_buffer", "--perfetto-backend", "inprocess")
	require.NotContains(t, progress, "shmem", "the note goes to the log, not the run's report")
	dir := filepath.Join(base, "hip_calls_conformance_transpose-trace-cmd-line")
	for _, f := range []string{"out_results.json", "out_results.pftrace", "out_results.otf2"} {
		require.FileExists(t, filepath.Join(dir, f))
	}
	var p struct {
		BufferRecords struct {
			KernelDispatch []json.RawMessage `json:"kernel_dispatch"`
		} `json:"buffer_records"`
	}
	resultsJSON(t, dir, &p)
	require.NotEmpty(t, p.BufferRecords.KernelDispatch)
	noLiteralPlaceholders(t, base)
}

// A variable's value that would climb out of -d stops the run before the
// app starts, naming the variable, and nothing is written outside -d
// (issue 41: %env{X}% = .. wrote beside it).
func TestConformanceVariableCannotClimbOutOfTheOutputDirectory(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_conformance")
	parent := t.TempDir()
	base := filepath.Join(parent, "out")
	t.Setenv("RPG_TEST_UP", "..")
	var progress bytes.Buffer
	_, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &progress,
		Args: []string{"--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", base, "-o", "%env{RPG_TEST_UP}%/escaped"}}, []string{app, "transpose"})
	require.ErrorContains(t, err, `environment variable RPG_TEST_UP=".." makes "%env{RPG_TEST_UP}%/escaped" expand to "../escaped"`)
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	for _, e := range entries {
		require.NotContains(t, e.Name(), "escaped")
	}
}
