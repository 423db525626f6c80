package hiptrace

import (
	"debug/elf"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/hipapi"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

var allHIP = []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_HIP_COMPILER_API_TRACE=1",
	"ROCPROF_MARKER_API_TRACE=1"}

// The calls hip_calls_counts.cpp makes, and nothing else.
var (
	wantRuntime = map[string]int{
		"hipMalloc": 3, "hipMemcpy": 3, "hipLaunchKernel": 6, "hipStreamCreate": 2,
		"hipStreamSynchronize": 2, "hipStreamDestroy": 2, "hipDeviceSynchronize": 1, "hipFree": 3,
	}
	wantCompiler = map[string]int{
		"__hipRegisterFatBinary": 1, "__hipRegisterFunction": 1, "__hipPushCallConfiguration": 6,
		"__hipPopCallConfiguration": 6, "__hipUnregisterFatBinary": 1,
	}
)

const countsOut = "levels=0,1,1,0 range_id=1"

func TestHIPCallCountsExact(t *testing.T) {
	out, dir := run{app: "testdata/hip_calls_counts", preload: true, env: allHIP}.exec(t)
	require.Contains(t, out, countsOut)
	tr := readTrace(t, dir)
	require.Len(t, tr.pids, 1)
	require.Zero(t, tr.dropped)
	require.Zero(t, tr.torn)
	require.Equal(t, wantRuntime, tr.count(tracing.DomainHIPRuntime))
	require.Equal(t, wantCompiler, tr.count(tracing.DomainHIPCompiler))

	// Each <<<>>> launch is configuration push, pop, then hipLaunchKernel,
	// in program order on one thread; every interval is well formed.
	var seq []string
	for _, c := range tr.calls {
		require.LessOrEqual(t, c.Start, c.End, tr.name(c))
		require.EqualValues(t, tr.calls[0].TID, c.TID, "all HIP calls come from the main thread")
		if n := tr.name(c); strings.Contains(n, "CallConfiguration") || n == "hipLaunchKernel" {
			seq = append(seq, n)
		}
	}
	require.Equal(t, strings.Repeat("__hipPushCallConfiguration __hipPopCallConfiguration hipLaunchKernel ", 6),
		strings.Join(seq, " ")+" ")

	// The spool names every function in its domain's table, with the ids
	// of the generated tables.
	require.Len(t, tr.names[tracing.DomainHIPCompiler], hipapi.NumCompilerFunctions())
	require.Len(t, tr.names[tracing.DomainHIPRuntime], hipapi.NumFunctions()-hipapi.NumCompilerFunctions())
	for d, names := range tr.names {
		for id, n := range names {
			want, _ := hipapi.FunctionName(id)
			require.Equal(t, want, n)
			require.Equal(t, hipapi.IsCompiler(id), d == tracing.DomainHIPCompiler, n)
		}
	}
}

func TestHIPRuntimeAndCompilerDomainsSwitchSeparately(t *testing.T) {
	_, dir := run{app: "testdata/hip_calls_counts", preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1"}}.exec(t)
	tr := readTrace(t, dir)
	require.Equal(t, wantRuntime, tr.count(tracing.DomainHIPRuntime))
	require.Empty(t, tr.count(tracing.DomainHIPCompiler))
	require.Empty(t, tr.markers)

	_, dir = run{app: "testdata/hip_calls_counts", preload: true,
		env: []string{"ROCPROF_HIP_COMPILER_API_TRACE=1"}}.exec(t)
	tr = readTrace(t, dir)
	require.Empty(t, tr.count(tracing.DomainHIPRuntime))
	require.Equal(t, wantCompiler, tr.count(tracing.DomainHIPCompiler))
}

// With the library preloaded but nothing enabled, the app runs unchanged
// and no spool is even created.
func TestHIPTracingOffRecordsNothing(t *testing.T) {
	out, dir := run{app: "testdata/hip_calls_counts", preload: true}.exec(t)
	require.Contains(t, out, countsOut)
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, files)
}

// Correlation ids are one id space shared by HIP calls and markers: unique
// in the process and increasing in each thread's order of calls. They need
// not be dense: each thread draws them from blocks of its own (no locked
// instruction per call), and the stream barriers skip to a new block.
func TestCorrelationIDsSharedAndUnique(t *testing.T) {
	_, dir := run{app: "testdata/hip_calls_counts", preload: true, env: allHIP}.exec(t)
	tr := readTrace(t, dir)
	var ids []uint64
	for _, c := range tr.calls {
		ids = append(ids, c.CorrelationID)
	}
	for _, m := range tr.markers {
		ids = append(ids, m.CorrelationID)
		if m.Function == tracing.MarkerThreadRange {
			ids = append(ids, m.RangeID) // the pop's id
		}
	}
	requireUnique(t, ids)
	requireIncreasingPerThread(t, tr.calls)
	// A single-threaded app's ids stay small: a gap is at most one block.
	slices.Sort(ids)
	require.Less(t, ids[len(ids)-1], uint64(4*len(ids)+4096))
}

// requireUnique fails on a zero or repeated id.
func requireUnique(t *testing.T, ids []uint64) {
	t.Helper()
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		require.NotZero(t, id)
		require.False(t, seen[id], "correlation id %d repeated", id)
		seen[id] = true
	}
}

// requireIncreasingPerThread: each thread's calls, in the order the thread
// recorded them (the spool's order, one thread's chunks in file order), have
// increasing correlation ids. (Not by start time: ticks converted with two
// chunks' anchors can disagree by a few ns.)
func requireIncreasingPerThread(t *testing.T, calls []tracing.APICall) {
	t.Helper()
	last := map[uint32]uint64{}
	for _, c := range calls {
		if c.CorrelationID <= last[c.TID] {
			require.FailNow(t, "correlation ids not increasing on a thread",
				"thread %d: call %d recorded after call %d", c.TID, c.CorrelationID, last[c.TID])
		}
		last[c.TID] = c.CorrelationID
	}
}

// hipcc-built apps reference HIP with symbol versions (hipMalloc@hip_4.2);
// the preload library must define each of them with the same version, or
// the dynamic linker would bind the app straight to libamdhip64.
func TestWrappersCarryTheAppsSymbolVersions(t *testing.T) {
	app, err := elf.Open(artifact(t, "testdata/hip_calls_counts"))
	require.NoError(t, err)
	defer app.Close()
	imports, err := app.ImportedSymbols()
	require.NoError(t, err)
	lib, err := elf.Open(artifact(t, "lib/librocprof-go-preload.so"))
	require.NoError(t, err)
	defer lib.Close()
	syms, err := lib.DynamicSymbols()
	require.NoError(t, err)
	exported := map[string]string{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && s.HasVersion {
			exported[s.Name] = s.Version
		}
	}
	n := 0
	for _, s := range imports {
		if !strings.HasPrefix(s.Name, "hip") && !strings.HasPrefix(s.Name, "__hip") {
			continue
		}
		n++
		require.NotEmpty(t, s.Version, s.Name)
		require.Equal(t, s.Version, exported[s.Name], "%s@%s", s.Name, s.Version)
	}
	require.GreaterOrEqual(t, n, len(wantRuntime)+len(wantCompiler))
	// The recorder's own API stays unversioned for the shim.
	for _, s := range syms {
		if s.Name == "rpg_now" || s.Name == "rpg_hip_current_stream" || s.Name == "roctxMarkA" {
			require.True(t, s.Version == "" || !strings.HasPrefix(s.Version, "hip_"), s.Name)
		}
	}
}

// 64 threads × 100k calls: every call recorded once, per thread, with
// unique ids, increasing on each thread (the 64 push/pop ranges draw two ids
// each).
func TestManyThreadsLoseNothing(t *testing.T) {
	const threads, calls = 64, 100000
	shm := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		// tmpfs, as the CLI uses: 300 MB of spool on a disk is slow to write.
		d, err := os.MkdirTemp("/dev/shm", "hiptrace-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(d) })
		shm = d
	}
	r := run{app: "testdata/hip_calls_threads", args: []string{"64", "100000"}, preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_MARKER_API_TRACE=1"}}
	out, dir := r.execIn(t, shm)
	require.Contains(t, out, "failures=0")
	tr := readTrace(t, dir)
	require.Zero(t, tr.dropped)
	require.Zero(t, tr.torn)
	perThread := map[uint32]int{}
	ids := make([]uint64, 0, threads*calls+threads+1)
	for _, c := range tr.calls {
		ids = append(ids, c.CorrelationID)
		if tr.name(c) == "hipGetDevice" {
			perThread[c.TID]++
		}
	}
	require.Len(t, perThread, threads)
	for tid, n := range perThread {
		require.Equal(t, calls, n, "thread %d", tid)
	}
	require.Len(t, tr.markers, threads)
	for _, m := range tr.markers {
		require.Equal(t, tracing.MarkerThreadRange, m.Function)
		require.Equal(t, calls, perThread[m.TID], "range %q on a thread with all its calls", m.Msg)
		ids = append(ids, m.CorrelationID, m.RangeID) // push and pop ids
	}
	require.Len(t, ids, threads*calls+2*threads+1) // + hipSetDevice
	requireUnique(t, ids)
	requireIncreasingPerThread(t, tr.calls)
	// Every call of a range's thread lies inside the range's ids.
	lo, hi := map[uint32]uint64{}, map[uint32]uint64{}
	for _, c := range tr.calls {
		if tr.name(c) == "hipGetDevice" {
			if l, ok := lo[c.TID]; !ok || c.CorrelationID < l {
				lo[c.TID] = c.CorrelationID
			}
			hi[c.TID] = max(hi[c.TID], c.CorrelationID)
		}
	}
	for _, m := range tr.markers {
		require.Less(t, m.CorrelationID, lo[m.TID], "range %q", m.Msg)
		require.Greater(t, m.RangeID, hi[m.TID], "range %q", m.Msg)
	}
}
