package rocprof_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// systraceApp is what hip_calls_systrace printed: the HIP calls it made, the
// dispatches and copies it caused, and its copy and launch calls in order.
type systraceApp struct {
	calls   map[string]int
	kernels map[string]int
	copies  int
	ops     map[string][]systraceOp // by HIP function, in call order
	ranges  map[string]int
}

type systraceOp struct {
	what  string // H2D, D2H, D2D, launch, captured
	bytes int
}

func parseSystrace(t *testing.T, out string) systraceApp {
	a := systraceApp{calls: map[string]int{}, kernels: map[string]int{}, ops: map[string][]systraceOp{}, ranges: map[string]int{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "call":
			a.calls[f[1]] = atoi(t, f[2])
		case strings.HasPrefix(line, "kernel "):
			i := strings.LastIndexByte(line, ' ')
			a.kernels[line[len("kernel "):i]] = atoi(t, line[i+1:])
		case len(f) == 2 && f[0] == "copies":
			a.copies = atoi(t, f[1])
		case len(f) >= 3 && f[0] == "op":
			o := systraceOp{what: f[2]}
			if len(f) == 4 {
				o.bytes = atoi(t, f[3])
			}
			a.ops[f[1]] = append(a.ops[f[1]], o)
		case len(f) >= 3 && f[0] == "ranges":
			for i := 1; i+1 < len(f); i += 2 {
				a.ranges[f[i]] = atoi(t, f[i+1])
			}
		}
	}
	require.NotEmpty(t, a.calls, "the app printed no calls:\n%s", out)
	return a
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err, s)
	return n
}

// csvTable is one CSV output by column name.
type csvTable struct {
	col  map[string]int
	rows [][]string
}

func (c csvTable) get(r []string, name string) string { return r[c.col[name]] }

func readTable(t *testing.T, dir, suffix string) csvTable {
	matches, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	require.NoError(t, err)
	require.Len(t, matches, 1, "one %s in %s", suffix, dir)
	f, err := os.Open(matches[0])
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	tab := csvTable{col: map[string]int{}, rows: rows[1:]}
	for i, h := range rows[0] {
		tab.col[h] = i
	}
	return tab
}

// jsonCopy is a memory copy of the JSON output (the CSV has no byte count).
type jsonCopy struct {
	Operation   int `json:"operation"`
	Correlation struct {
		Internal uint64 `json:"internal"`
	} `json:"correlation_id"`
	Bytes int `json:"bytes"`
}

func readJSONCopies(t *testing.T, dir string) map[string][]jsonCopy {
	matches, err := filepath.Glob(filepath.Join(dir, "*_results.json"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	raw, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			Records struct {
				Copies []jsonCopy `json:"memory_copy"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	byCorr := map[string][]jsonCopy{}
	for _, tool := range doc.Tool {
		for _, c := range tool.Records.Copies {
			id := strconv.FormatUint(c.Correlation.Internal, 10)
			byCorr[id] = append(byCorr[id], c)
		}
	}
	return byCorr
}

// The copy directions of the JSON output (rocprofiler-sdk's operation numbers).
var copyOperation = map[string]int{"H2H": 1, "H2D": 2, "D2H": 3, "D2D": 4}
var copyDirection = map[string]string{"H2D": "MEMORY_COPY_HOST_TO_DEVICE", "D2H": "MEMORY_COPY_DEVICE_TO_HOST", "D2D": "MEMORY_COPY_DEVICE_TO_DEVICE"}

// Which HIP calls may cause a dispatch of each kernel of the app.
func launchedBy(kernel, function string) bool {
	base := strings.TrimSuffix(function, "_spt")
	switch {
	case strings.HasPrefix(kernel, "vadd("):
		return base == "hipLaunchKernel" || base == "hipGraphLaunch"
	case kernel == "module_fill":
		return base == "hipModuleLaunchKernel" || base == "hipExtModuleLaunchKernel"
	case strings.HasPrefix(kernel, "__amd_rocclr_"): // the runtime's blit kernels
		return base == "hipMemcpyAsync" || base == "hipMemsetAsync" || base == "hipGraphLaunch"
	}
	return false
}

// On every runtime of the matrix, `rocprof-go --virtual-gpu --sys-trace
// --pmc SQ_WAVES` of a multi-stream app built with that runtime's hipcc
// records exactly what the app did: every HIP call it made (by the symbol
// its headers bound: R0600, _spt, launch variants, calls through
// hipGetProcAddress), every dispatch once, named by the HIP call that caused
// it (graph dispatches by hipGraphLaunch), copies with their direction and
// size, HSA calls, agents, ROCTx ranges, and SQ_WAVES exact per dispatch.
func TestSysTraceOnEveryRuntime(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	const streams, iterations, graphLaunches = 2, 3, 4
	for _, rt := range rts {
		for _, app := range []string{"hip_calls_systrace", "hip_calls_systrace_spt"} {
			t.Run(rt.Name+"/"+app, func(t *testing.T) {
				require.NoError(t, rt.Check())
				argv := []string{filepath.Join(rt.Apps, app), strconv.Itoa(streams), strconv.Itoa(iterations),
					strconv.Itoa(graphLaunches), filepath.Join(rt.Apps, "module_kernels.co")}
				if rt.Root != "" {
					argv = append([]string{filepath.Join(repo, "scripts", "rocm-root.sh"), "run", rt.Root, "--"}, argv...)
				}
				out := t.TempDir()
				var stdout, stderr strings.Builder
				res, err := rocprof.Run(context.Background(), rocprof.Options{
					Args:   []string{"--virtual-gpu", "--sys-trace", "--pmc", "SQ_WAVES", "-f", "csv,json", "-d", out, "-o", "run"},
					Stdout: &stdout, Stderr: &stderr,
				}, argv)
				require.NoError(t, err)
				require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
				hipMajor, err := rt.HIPMajor()
				require.NoError(t, err)
				checkSysTrace(t, rt.Name, hipMajor, parseSystrace(t, stdout.String()), res.Dir)
			})
		}
	}
}

func checkSysTrace(t *testing.T, runtimeName string, hipMajor int, app systraceApp, dir string) {
	// HIP calls: exactly the app's runtime API calls (the compiler API's
	// registration calls are the only others).
	hip := readTable(t, dir, "hip_api_trace.csv")
	got := map[string]int{}
	callOf := map[string]string{} // correlation id -> HIP function
	var order []int
	for i, r := range hip.rows {
		fn := hip.get(r, "Function")
		id := hip.get(r, "Correlation_Id")
		require.NotContains(t, callOf, id, "correlation id %s twice in the HIP API trace", id)
		callOf[id] = fn
		order = append(order, i)
		if hip.get(r, "Domain") == "HIP_RUNTIME_API_EXT" {
			got[fn]++
		}
	}
	require.Equal(t, app.calls, got, "ROCm %s: HIP calls recorded (right) against made (left)", runtimeName)
	if hipMajor >= 6 {
		require.Contains(t, got, "hipGetDevicePropertiesR0600", "HIP 6+ headers bind hipGetDeviceProperties to R0600")
		require.Contains(t, got, "hipChooseDeviceR0600")
		require.Equal(t, 3, got["hipGetDevice"], "calls through hipGetProcAddress's pointers")
	}

	// The copy and launch calls in call order, paired with what the app asked.
	sort.SliceStable(order, func(a, b int) bool {
		return atoi(t, hip.get(hip.rows[order[a]], "Start_Timestamp")) < atoi(t, hip.get(hip.rows[order[b]], "Start_Timestamp"))
	})
	opOf := map[string]systraceOp{} // correlation id -> what the call asked for
	seen := map[string]int{}
	for _, i := range order {
		fn := hip.get(hip.rows[i], "Function")
		if ops, ok := app.ops[fn]; ok {
			require.Less(t, seen[fn], len(ops), "more %s calls than the app made", fn)
			opOf[hip.get(hip.rows[i], "Correlation_Id")] = ops[seen[fn]]
			seen[fn]++
		}
	}

	// Dispatches: each app kernel as often as launched, each named by a call
	// that launches it; every launch call with exactly one dispatch, a
	// captured one with none; every blit under a copy, memset or graph.
	kt := readTable(t, dir, "kernel_trace.csv")
	kernels := map[string]int{}
	dispatchesOf := map[string]int{}
	blitsOf := map[string]int{}
	waves := map[string]string{} // dispatch id -> SQ_WAVES the model gives
	for _, r := range kt.rows {
		name, id := kt.get(r, "Kernel_Name"), kt.get(r, "Correlation_Id")
		fn, ok := callOf[id]
		require.True(t, ok, "dispatch %s of %s has correlation id %s, no HIP call's", kt.get(r, "Dispatch_Id"), name, id)
		require.True(t, launchedBy(name, fn), "dispatch of %s names %s", name, fn)
		if strings.HasPrefix(name, "__amd_rocclr_") {
			blitsOf[id]++
		} else {
			kernels[name]++
			dispatchesOf[id]++
		}
		grid := atoi(t, kt.get(r, "Grid_Size_X")) * atoi(t, kt.get(r, "Grid_Size_Y")) * atoi(t, kt.get(r, "Grid_Size_Z"))
		wg := atoi(t, kt.get(r, "Workgroup_Size_X")) * atoi(t, kt.get(r, "Workgroup_Size_Y")) * atoi(t, kt.get(r, "Workgroup_Size_Z"))
		waves[kt.get(r, "Dispatch_Id")] = fmt.Sprintf("%d.000000", (grid+wg-1)/wg*((wg+63)/64))
	}
	require.Equal(t, app.kernels, kernels, "ROCm %s: app kernel dispatches", runtimeName)
	for id, fn := range callOf {
		base := strings.TrimSuffix(fn, "_spt")
		switch base {
		case "hipLaunchKernel", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel", "hipGraphLaunch":
			want := 1
			if opOf[id].what == "captured" {
				want = 0
			}
			require.Equal(t, want, dispatchesOf[id], "%s (id %s) dispatches", fn, id)
		case "hipMemsetAsync":
			require.NotZero(t, blitsOf[id], "hipMemsetAsync (id %s) has no fill dispatch", id)
		}
	}

	// Copies: every copy call's activity (engine copies, blit kernels) under
	// its id, with its direction and byte count; graph copies under
	// hipGraphLaunch; a captured copy has none.
	mc := readTable(t, dir, "memory_copy_trace.csv")
	copyRows := map[string][]string{}
	for _, r := range mc.rows {
		id := mc.get(r, "Correlation_Id")
		fn, ok := callOf[id]
		require.True(t, ok, "copy with correlation id %s, no HIP call's", id)
		base := strings.TrimSuffix(fn, "_spt")
		require.True(t, base == "hipMemcpyAsync" || base == "hipGraphLaunch", "copy names %s", fn)
		copyRows[id] = append(copyRows[id], mc.get(r, "Direction"))
	}
	bytes := readJSONCopies(t, dir)
	copies := 0
	for id, fn := range callOf {
		switch strings.TrimSuffix(fn, "_spt") {
		case "hipMemcpyAsync":
			o := opOf[id]
			if o.what == "captured" {
				require.Zero(t, len(copyRows[id])+blitsOf[id], "captured %s (id %s) reached the GPU", fn, id)
				continue
			}
			copies++
			require.NotZero(t, len(copyRows[id])+blitsOf[id], "%s %s (id %s) has no copy", fn, o.what, id)
			sum := 0
			for i, d := range copyRows[id] {
				require.Equal(t, copyDirection[o.what], d, "%s %s (id %s)", fn, o.what, id)
				require.Equal(t, copyOperation[o.what], bytes[id][i].Operation)
				sum += bytes[id][i].Bytes
			}
			if len(copyRows[id]) > 0 {
				require.Equal(t, o.bytes, sum, "%s %s (id %s): bytes copied", fn, o.what, id)
			}
		case "hipGraphLaunch":
			copies++
			require.NotZero(t, len(copyRows[id])+blitsOf[id], "%s (id %s): the graph's copy", fn, id)
		}
	}
	require.Equal(t, app.copies, copies)

	// SQ_WAVES: one value per dispatch, the model's.
	cc := readTable(t, dir, "counter_collection.csv")
	counted := map[string]bool{}
	for _, r := range cc.rows {
		require.Equal(t, "SQ_WAVES", cc.get(r, "Counter_Name"))
		d := cc.get(r, "Dispatch_Id")
		require.False(t, counted[d], "dispatch %s counted twice", d)
		counted[d] = true
		require.Equal(t, waves[d], cc.get(r, "Counter_Value"), "SQ_WAVES of dispatch %s (%s)", d, cc.get(r, "Kernel_Name"))
	}
	require.Len(t, counted, len(kt.rows), "every dispatch counted")

	// HSA calls under it all, agents, ROCTx.
	hsa := readTable(t, dir, "hsa_api_trace.csv")
	hsaCalls := map[string]int{}
	for _, r := range hsa.rows {
		hsaCalls[hsa.get(r, "Function")]++
	}
	require.NotZero(t, hsaCalls["hsa_queue_create"], "%v", hsaCalls)
	require.NotZero(t, hsaCalls["hsa_signal_store_screlease"]+hsaCalls["hsa_signal_store_relaxed"], "%v", hsaCalls)
	// HIP 7.2 retries a copy that an engine refuses on another engine: one
	// copy, two calls.
	engineCopies := hsaCalls["hsa_amd_memory_async_copy"] + hsaCalls["hsa_amd_memory_async_copy_on_engine"]
	require.GreaterOrEqual(t, engineCopies, len(mc.rows), "an HSA copy call per engine copy: %v", hsaCalls)
	require.NotZero(t, len(mc.rows), "no engine copies")
	agents := readTable(t, dir, "agent_info.csv")
	var gpus []string
	for _, r := range agents.rows {
		if agents.get(r, "Agent_Type") == "GPU" {
			gpus = append(gpus, agents.get(r, "Name"))
		}
	}
	require.Equal(t, []string{"gfx90a"}, gpus)
	markers := readTable(t, dir, "marker_api_trace.csv")
	ranges := map[string]int{}
	for _, r := range markers.rows {
		ranges[markers.get(r, "Function")]++
	}
	require.Equal(t, 1, ranges["systrace start"], "%v", ranges)
	for name, n := range app.ranges {
		require.Equal(t, n, ranges[name], "range %s: %v", name, ranges)
	}
}
