package rocprof_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// The counter passes of the matrix test: one --pmc set (hardware counters
// of two blocks and two derived counters), then an input file whose pmc:
// lines are two more runs of the app.
var (
	countersPMC    = []string{"SQ_WAVES", "GRBM_COUNT", "SQ_INSTS_VALU", "GPU_UTIL", "VALUInsts"}
	countersPasses = [][]string{
		{"SQ_WAVES", "SQ_INSTS_SALU", "TCC_HIT", "TCC_MISS", "Wavefronts"},
		{"GRBM_GUI_ACTIVE", "SQ_BUSY_CYCLES", "SQ_BUSY_CU_CYCLES", "SPI_CSN_WAVE", "SQ_INSTS_VMEM_WR"},
	}
	derivedCounters = map[string]bool{"GPU_UTIL": true, "VALUInsts": true, "Wavefronts": true}
)

// matrixApp is the multi-kernel app the counter and thread-trace matrix
// tests run, as its command line on one runtime.
func matrixApp(repo string, rt rocmmatrix.Runtime, args ...string) []string {
	argv := append([]string{filepath.Join(rt.Apps, "multistream")}, args...)
	if rt.Root != "" {
		argv = append([]string{filepath.Join(repo, "scripts", "rocm-root.sh"), "run", rt.Root, "--"}, argv...)
	}
	return argv
}

// multistream's own report of what it launched.
var multistreamLine = regexp.MustCompile(`streams=(\d+) iterations=(\d+) dispatches=(\d+) copies=(\d+)`)

func multistreamDispatches(t *testing.T, stdout string) int {
	m := multistreamLine.FindStringSubmatch(stdout)
	require.NotNil(t, m, "multistream's report: %s", stdout)
	return atoi(t, m[3])
}

// appKernel tells the app's own kernels (the same on every runtime) from the
// runtime's blit kernels (which differ between HIP versions).
func appKernel(name string) bool { return !strings.HasPrefix(name, "__amd_rocclr_") }

// On every runtime of the matrix, counters of a multi-stream app through
// the intercepted queues, in one pass (--pmc) and in several (-i with pmc:
// lines, one run each): every dispatch has one row per requested counter,
// every value (summed, and each instance in the JSON output) is what the
// virtual GPU's counter model gives for that dispatch's grid, and the app's
// kernels have the same values on every runtime.
func TestCountersOnEveryRuntime(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	// Per runtime, per pass: the app kernels' values ("kernel counter" ->
	// the values of its dispatches, sorted: dispatch ids differ between
	// runtimes, whose HIP launch different blit kernels).
	results := map[string]map[string]map[string][]string{}
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			results[rt.Name] = countersOnRuntime(t, rt, matrixApp(repo, rt, "2", "2"), "", countersPMC, countersPasses)
		})
	}
	t.Run("same on every runtime", func(t *testing.T) {
		host := results[rocmmatrix.HostName]
		require.NotNil(t, host, "ROCm %s did not finish", rocmmatrix.HostName)
		require.Len(t, results, len(rts), "every runtime finished")
		for name, got := range results {
			require.Equal(t, host, got, "ROCm %s's app-kernel counters against ROCm %s's", name, rocmmatrix.HostName)
		}
	})
}

// The counter passes on an MI300X: the same blocks (gfx942 has neither
// VALUInsts nor Wavefronts, as in rocprofv3), and a pass of the model's
// other counted blocks (CPC, SPI) and of blocks it reads but does not
// count (TA, TCP, TD: 0 at every instance), whose instances run along XCC,
// SE and instance at once.
var (
	gfx942PMC    = []string{"SQ_WAVES", "GRBM_COUNT", "SQ_INSTS_VALU", "GPU_UTIL"}
	gfx942Passes = [][]string{
		{"SQ_WAVES", "SQ_INSTS_SALU", "TCC_HIT", "TCC_MISS"},
		countersPasses[1],
		{"CPC_CPC_STAT_BUSY", "SPI_CSN_BUSY", "TA_TA_BUSY", "TCP_TCC_READ_REQ", "TD_TD_BUSY"},
	}
)

// On every runtime that knows gfx942 (ROCm 6.1 and later), counters on the
// virtual MI300X: 8 XCCs of 4 SEs. The run reports the agent as
// AQLprofile's MI300X goldens have it (xcc 8, se 32, cu 304; for that agent
// the packets are byte-identical to AQLprofile's, internal/aql's
// TestGoldenPMC), every XCC's samples are read (SQ_WAVES of a 1,024-wave
// dispatch is 1,024: with the agent described as one XCC of 32 SEs it was
// one XCC's 128), and every value, per dimension instance (XCC, SE,
// instance) and summed, is the model's, with no error from the virtual
// GPU's PM4 interpreter.
func TestCountersOnGfx942(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	golden := loadGoldenAgent(t, repo, "gfx942_mi300x")
	results := map[string]map[string]map[string][]string{}
	var names []string
	for _, rt := range rts {
		if rt.Name == rocmmatrix.HostName {
			continue // ROCR 5.2.3 does not know gfx942
		}
		names = append(names, rt.Name)
		t.Run(rt.Name, func(t *testing.T) {
			argv := matrixApp(repo, rt, "2", "2")
			argv[slices.Index(argv, filepath.Join(rt.Apps, "multistream"))] = filepath.Join(rt.Apps, "gfx942", "multistream")
			results[rt.Name] = countersOnRuntime(t, rt, argv, "gfx942", gfx942PMC, gfx942Passes, func(t *testing.T, gpu vgpuShape) {
				require.Equal(t, "gfx942", gpu.arch)
				require.Equal(t, golden, gpu.dev.Agent, "ROCm %s: the agent as the run reports it, against AQLprofile's MI300X goldens", rt.Name)
			})
		})
	}
	require.NotEmpty(t, names, "a runtime that knows gfx942")
	t.Run("same on every runtime", func(t *testing.T) {
		require.Len(t, results, len(names), "every runtime finished")
		for _, name := range names {
			require.Equal(t, results[names[0]], results[name], "ROCm %s's app-kernel counters against ROCm %s's", name, names[0])
		}
	})
}

// loadGoldenAgent is the agent of an AQLprofile golden case (shared folder).
func loadGoldenAgent(t *testing.T, repo, label string) aql.Agent {
	var g struct {
		Agent struct {
			GfxIP string `json:"agent_gfxip"`
			XCC   int    `json:"xcc_num"`
			SE    int    `json:"se_num"`
			CU    int    `json:"cu_num"`
			SA    int    `json:"shader_arrays_per_se"`
		} `json:"agent"`
	}
	raw, err := os.ReadFile(filepath.Join(repo, "..", "shared", "golden", "aqlprofile", label, "pmc_sq_waves.json"))
	require.NoError(t, err, "the AQLprofile goldens must be at ../shared/golden/aqlprofile beside the checkout")
	require.NoError(t, json.Unmarshal(raw, &g))
	return aql.Agent{GfxIP: g.Agent.GfxIP, XCC: g.Agent.XCC, SE: g.Agent.SE, CU: g.Agent.CU, SAPerSE: g.Agent.SA}
}

// countersOnRuntime runs argv on one runtime's virtual GPU (arch; "" is
// the default) with counters in one pass (--pmc pmc) and in several (-i
// with one pmc: line per passes entry), checks every value against the
// model (and the agent with each check), and returns the app kernels'
// values per pass.
func countersOnRuntime(t *testing.T, rt rocmmatrix.Runtime, argv []string, arch string, pmc []string, passes [][]string,
	checks ...func(*testing.T, vgpuShape)) map[string]map[string][]string {
	require.NoError(t, rt.Check())
	input := filepath.Join(t.TempDir(), "passes.txt")
	var lines []string
	for _, p := range passes {
		lines = append(lines, "pmc: "+strings.Join(p, " "))
	}
	require.NoError(t, os.WriteFile(input, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	vgpu := "--virtual-gpu"
	if arch != "" {
		vgpu += "=" + arch
	}
	started := time.Now()
	got := map[string]map[string][]string{}
	check := func(dir string, requested []string, dispatches int) map[string][]string {
		gpu := vgpuGPU(t, dir)
		for _, c := range checks {
			c(t, gpu)
		}
		return checkCounters(t, rt.Name, dir, requested, dispatches)
	}

	// One pass.
	out := t.TempDir()
	var stdout, stderr strings.Builder
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args:   append(append([]string{vgpu, "--kernel-trace", "--pmc"}, pmc...), "-f", "csv,json", "-d", out, "-o", "run"),
		Stdout: &stdout, Stderr: &stderr,
	}, argv)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
	noVGPUError(t, rt.Name, stderr.String())
	got["pmc"] = check(res.Dir, pmc, multistreamDispatches(t, stdout.String()))

	// Several passes: -i with one pmc: line each, a run into pmc_N/.
	out = t.TempDir()
	stdout.Reset()
	stderr.Reset()
	res, err = rocprof.Run(context.Background(), rocprof.Options{
		Args:   []string{vgpu, "--kernel-trace", "-i", input, "-f", "csv,json", "-d", out, "-o", "run"},
		Stdout: &stdout, Stderr: &stderr,
	}, argv)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
	noVGPUError(t, rt.Name, stderr.String())
	require.Len(t, res.Manifest.Passes, len(passes))
	reports := multistreamLine.FindAllString(stdout.String(), -1)
	require.Len(t, reports, len(passes), "one app run per pass: %s", stdout.String())
	for i, pass := range passes {
		dir := fmt.Sprintf("pmc_%d", i+1)
		require.Equal(t, dir, res.Manifest.Passes[i].Dir)
		require.Equal(t, pass, res.Manifest.Passes[i].Counters)
		require.Equal(t, 0, res.Manifest.Passes[i].ExitStatus)
		got[dir] = check(filepath.Join(res.Dir, dir), pass, multistreamDispatches(t, reports[i]))
	}
	t.Logf("ROCm %s: %d runs of the app in %.1f s", rt.Name, 1+len(passes), time.Since(started).Seconds())
	return got
}

// noVGPUError fails on an error of the virtual GPU (its PM4 interpreter's
// "read at SE 4 ..., outside 4 SEs"), naming the first and how many.
func noVGPUError(t *testing.T, runtimeName, stderr string) {
	t.Helper()
	var errs []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "virtual GPU: error") {
			errs = append(errs, l)
		}
	}
	require.Zero(t, len(errs), "ROCm %s: %d errors of the virtual GPU, the first: %s", runtimeName, len(errs), strings.Join(errs[:min(1, len(errs))], ""))
}

// jsonCounterDispatch is one dispatch's counter records in the JSON output:
// one record per dimension instance, in instance order.
type jsonCounterDispatch struct {
	DispatchData struct {
		Info struct {
			DispatchID uint64 `json:"dispatch_id"`
		} `json:"dispatch_info"`
	} `json:"dispatch_data"`
	Records []struct {
		Counter struct {
			Handle uint64 `json:"handle"`
		} `json:"counter_id"`
		Value float64 `json:"value"`
	} `json:"records"`
}

// readJSONCounters returns, per dispatch id, each counter's instance values.
func readJSONCounters(t *testing.T, dir string) map[string]map[string][]float64 {
	matches, err := filepath.Glob(filepath.Join(dir, "*_results.json"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	raw, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			Counters []struct {
				ID struct {
					Handle uint64 `json:"handle"`
				} `json:"id"`
				Name string `json:"name"`
			} `json:"counters"`
			Callback struct {
				Counters []jsonCounterDispatch `json:"counter_collection"`
			} `json:"callback_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	out := map[string]map[string][]float64{}
	for _, tool := range doc.Tool {
		names := map[uint64]string{}
		for _, c := range tool.Counters {
			names[c.ID.Handle] = c.Name
		}
		for _, d := range tool.Callback.Counters {
			id := strconv.FormatUint(d.DispatchData.Info.DispatchID, 10)
			require.NotContains(t, out, id, "dispatch %s twice in the JSON counter records", id)
			out[id] = map[string][]float64{}
			for _, r := range d.Records {
				name, ok := names[r.Counter.Handle]
				require.True(t, ok, "counter id %d not in the counter list", r.Counter.Handle)
				out[id][name] = append(out[id][name], r.Value)
			}
		}
	}
	return out
}

// checkCounters checks one pass's outputs in dir against the model and
// returns the app kernels' values (kernel -> counter -> sorted values).
func checkCounters(t *testing.T, runtimeName, dir string, requested []string, appDispatches int) map[string][]string {
	t.Helper()
	gpu := vgpuGPU(t, dir)
	kt := readTable(t, dir, "kernel_trace.csv")
	dispatches := map[string]vgpuDispatch{}
	names := map[string]string{}
	nApp := 0
	for _, r := range kt.rows {
		id := kt.get(r, "Dispatch_Id")
		var d vgpuDispatch
		for i, axis := range []string{"X", "Y", "Z"} {
			d.grid[i] = atoi(t, kt.get(r, "Grid_Size_"+axis))
			d.wg[i] = atoi(t, kt.get(r, "Workgroup_Size_"+axis))
		}
		require.NotContains(t, dispatches, id, "dispatch %s twice in the kernel trace", id)
		dispatches[id] = d
		names[id] = kt.get(r, "Kernel_Name")
		require.Equal(t, "0", kt.get(r, "LDS_Block_Size"), "%s: the restated model leaves LDS out", names[id])
		if appKernel(names[id]) {
			nApp++
		}
	}
	require.Equal(t, appDispatches, nApp, "ROCm %s: the app's dispatches in the kernel trace", runtimeName)

	// counter_collection.csv: one row per dispatch and counter, instances
	// summed, each the model's.
	cc := readTable(t, dir, "counter_collection.csv")
	values := map[string]map[string]string{}
	for _, r := range cc.rows {
		id, counter := cc.get(r, "Dispatch_Id"), cc.get(r, "Counter_Name")
		d, ok := dispatches[id]
		require.True(t, ok, "counter row of dispatch %s, which the kernel trace does not have", id)
		require.Equal(t, names[id], cc.get(r, "Kernel_Name"), "dispatch %s", id)
		require.Equal(t, strconv.Itoa(d.grid[0]*d.grid[1]*d.grid[2]), cc.get(r, "Grid_Size"), "dispatch %s", id)
		if values[id] == nil {
			values[id] = map[string]string{}
		}
		require.NotContains(t, values[id], counter, "dispatch %s: %s twice", id, counter)
		values[id][counter] = cc.get(r, "Counter_Value")
	}
	perInstance := readJSONCounters(t, dir)
	app := map[string][]string{}
	for id, d := range dispatches {
		require.Len(t, values[id], len(requested), "ROCm %s: dispatch %s (%s) has a row per counter: %v", runtimeName, id, names[id], values[id])
		for _, counter := range requested {
			v, ok := values[id][counter]
			require.True(t, ok, "dispatch %s has no %s", id, counter)
			var want string
			if derivedCounters[counter] {
				want = csvValue(gpu.derived(t, counter, d))
				require.Len(t, perInstance[id][counter], 1, "dispatch %s: %s is one value", id, counter)
			} else {
				inst := gpu.perInstance(t, counter, d)
				want = csvValue(float64(sum(inst)))
				got := make([]uint64, len(perInstance[id][counter]))
				for i, f := range perInstance[id][counter] {
					got[i] = uint64(f)
				}
				require.Equal(t, inst, got, "ROCm %s: dispatch %s (%s, %v): %s per instance", runtimeName, id, names[id], d, counter)
			}
			require.Equal(t, want, v, "ROCm %s: dispatch %s (%s, %v): %s", runtimeName, id, names[id], d, counter)
			if appKernel(names[id]) {
				key := names[id] + " " + counter
				app[key] = append(app[key], v)
			}
		}
	}
	require.Len(t, perInstance, len(dispatches), "ROCm %s: JSON counter records per dispatch", runtimeName)
	for _, vs := range app {
		slices.Sort(vs)
	}
	return app
}
