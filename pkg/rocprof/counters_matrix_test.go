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
	input := filepath.Join(t.TempDir(), "passes.txt")
	var lines []string
	for _, p := range countersPasses {
		lines = append(lines, "pmc: "+strings.Join(p, " "))
	}
	require.NoError(t, os.WriteFile(input, []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	// Per runtime, per pass: the app kernels' values ("kernel counter" ->
	// the values of its dispatches, sorted: dispatch ids differ between
	// runtimes, whose HIP launch different blit kernels).
	results := map[string]map[string]map[string][]string{}
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			started := time.Now()
			got := map[string]map[string][]string{}
			argv := matrixApp(repo, rt, "2", "2")

			// One pass.
			out := t.TempDir()
			var stdout, stderr strings.Builder
			res, err := rocprof.Run(context.Background(), rocprof.Options{
				Args:   append(append([]string{"--virtual-gpu", "--kernel-trace", "--pmc"}, countersPMC...), "-f", "csv,json", "-d", out, "-o", "run"),
				Stdout: &stdout, Stderr: &stderr,
			}, argv)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
			got["pmc"] = checkCounters(t, rt.Name, res.Dir, countersPMC, multistreamDispatches(t, stdout.String()))

			// Several passes: -i with two pmc: lines, each a run into pmc_N/.
			out = t.TempDir()
			stdout.Reset()
			stderr.Reset()
			res, err = rocprof.Run(context.Background(), rocprof.Options{
				Args:   []string{"--virtual-gpu", "--kernel-trace", "-i", input, "-f", "csv,json", "-d", out, "-o", "run"},
				Stdout: &stdout, Stderr: &stderr,
			}, argv)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
			require.Len(t, res.Manifest.Passes, len(countersPasses))
			reports := multistreamLine.FindAllString(stdout.String(), -1)
			require.Len(t, reports, len(countersPasses), "one app run per pass: %s", stdout.String())
			for i, pass := range countersPasses {
				dir := fmt.Sprintf("pmc_%d", i+1)
				require.Equal(t, dir, res.Manifest.Passes[i].Dir)
				require.Equal(t, pass, res.Manifest.Passes[i].Counters)
				require.Equal(t, 0, res.Manifest.Passes[i].ExitStatus)
				got[dir] = checkCounters(t, rt.Name, filepath.Join(res.Dir, dir), pass, multistreamDispatches(t, reports[i]))
			}
			results[rt.Name] = got
			t.Logf("ROCm %s: 3 runs of the app in %.1f s", rt.Name, time.Since(started).Seconds())
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
