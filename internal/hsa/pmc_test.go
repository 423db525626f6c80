package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// counterRun is a profiled run's dispatches and counter sums.
type counterRun struct {
	records
	// sums[dispatch id][counter name] sums every dimension instance.
	sums      map[uint64]map[string]float64
	instances map[uint64]map[string]int
}

func readCounters(t *testing.T, dir string) counterRun {
	cr := counterRun{records: readSpools(t, dir), sums: map[uint64]map[string]float64{},
		instances: map[uint64]map[string]int{}}
	paths, err := tracing.List(dir)
	require.NoError(t, err)
	for _, p := range paths {
		r, err := tracing.Open(p)
		require.NoError(t, err)
		for r.Next() {
			if r.Kind() != tracing.KindCounterSample {
				continue
			}
			c := r.CounterSample()
			if cr.sums[c.DispatchID] == nil {
				cr.sums[c.DispatchID] = map[string]float64{}
				cr.instances[c.DispatchID] = map[string]int{}
			}
			cr.sums[c.DispatchID][string(c.Name)] += c.Value
			cr.instances[c.DispatchID][string(c.Name)]++
		}
		require.NoError(t, r.Close())
	}
	return cr
}

// modelWaves is the virtual GPU's SQ_WAVES for a dispatch: workgroups ×
// ceil(workgroup size / 64) on gfx9.
func modelWaves(d tracing.KernelDispatch) float64 {
	wgs, size := uint64(1), uint64(1)
	for i := 0; i < 3; i++ {
		g, w := uint64(d.Grid[i]), uint64(d.Workgroup[i])
		wgs *= (g + w - 1) / w
		size *= w
	}
	return float64(wgs * ((size + 63) / 64))
}

func counterVars(pmc string, extra ...string) []string {
	return append([]string{"ROCPROF_COUNTER_COLLECTION=1", "ROCPROF_COUNTERS=" + pmc}, extra...)
}

// Every dispatch of multistream (22, on four concurrent streams) gets
// SQ_WAVES equal to the model, summed over the 8 shader engines.
func TestCountersSQWavesMatchTheModelForEveryDispatch(t *testing.T) {
	r := runApp(t, counterVars("pmc: SQ_WAVES", "ROCPROF_KERNEL_TRACE=1"), "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	require.Len(t, cr.dispatches, 22)
	for _, d := range cr.dispatches {
		s, ok := cr.sums[d.DispatchID]
		require.True(t, ok, "dispatch %d (%s) has no counters", d.DispatchID, cr.kernelName(d))
		require.Equal(t, modelWaves(d), s["SQ_WAVES"], cr.kernelName(d))
		require.Equal(t, 8, cr.instances[d.DispatchID]["SQ_WAVES"], "one sample per SE")
	}
	require.Len(t, cr.sums, 22, "no samples without a dispatch")
}

// A derived counter equals the hand computation from the model:
// GPU_UTIL = 100 * GRBM_GUI_ACTIVE / GRBM_COUNT with GRBM_COUNT = cycles +
// 1000 and GRBM_GUI_ACTIVE = cycles.
func TestCountersDerivedCounterEqualsHandComputation(t *testing.T) {
	r := runApp(t, counterVars("pmc: GPU_UTIL GRBM_COUNT GRBM_GUI_ACTIVE", "ROCPROF_KERNEL_TRACE=1",
		"ROCPROF_VGPU_CLOCK=virtual"), "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	require.Len(t, cr.dispatches, 22)
	for _, d := range cr.dispatches {
		s := cr.sums[d.DispatchID]
		waves := modelWaves(d)
		cycles := float64(int64((2000 + 8*waves) * 1700 / 1000))
		require.Equal(t, cycles, s["GRBM_GUI_ACTIVE"], cr.kernelName(d))
		require.Equal(t, cycles+1000, s["GRBM_COUNT"], cr.kernelName(d))
		require.InDelta(t, 100*cycles/(cycles+1000), s["GPU_UTIL"], 1e-9, cr.kernelName(d))
	}
}

// Include/exclude regexes select kernels by their demangled names; the
// iteration range selects per-kernel dispatch numbers.
func TestCountersFiltersSelectExactlyTheExpectedDispatches(t *testing.T) {
	r := runApp(t, counterVars("pmc: SQ_WAVES", "ROCPROF_KERNEL_TRACE=1",
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=vadd|scale", "ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX=^scale"),
		"multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	counted := 0
	for _, d := range cr.dispatches {
		_, ok := cr.sums[d.DispatchID]
		require.Equal(t, cr.kernelName(d) == "_Z4vaddPKfS0_Pfi.kd", ok, cr.kernelName(d))
		if ok {
			counted++
			require.Equal(t, modelWaves(d), cr.sums[d.DispatchID]["SQ_WAVES"])
		}
	}
	require.Equal(t, 10, counted)

	r = runApp(t, counterVars("pmc: SQ_WAVES", "ROCPROF_KERNEL_TRACE=1",
		"ROCPROF_KERNEL_FILTER_RANGE=[2, [4-5]]"), "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr = readCounters(t, r.spools)
	// Per-kernel iteration numbers in dispatch order: 3 kernels with 10, 8
	// and 4 dispatches give 3 + 3 + 2 selected ones.
	byKernel := map[string][]tracing.KernelDispatch{}
	for _, d := range cr.dispatches {
		byKernel[cr.kernelName(d)] = append(byKernel[cr.kernelName(d)], d)
	}
	total := 0
	for name, ds := range byKernel {
		sort.Slice(ds, func(i, j int) bool { return ds[i].DispatchID < ds[j].DispatchID })
		for i, d := range ds {
			n := i + 1
			_, ok := cr.sums[d.DispatchID]
			require.Equal(t, n == 2 || n == 4 || n == 5, ok, "%s iteration %d", name, n)
			if ok {
				total++
			}
		}
	}
	require.Equal(t, 8, total)
}

// With -T the filters match the truncated names the outputs show, as
// rocprofv3 does: '^vadd$' selects vadd(float const*, ...), which its
// demangled name would not match.
func TestCountersFilterMatchesTruncatedNames(t *testing.T) {
	r := runApp(t, counterVars("pmc: SQ_WAVES", "ROCPROF_KERNEL_TRACE=1", "ROCPROF_TRUNCATE_KERNELS=1",
		"ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=^vadd$"), "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	counted := 0
	for _, d := range cr.dispatches {
		_, ok := cr.sums[d.DispatchID]
		require.Equal(t, cr.kernelName(d) == "_Z4vaddPKfS0_Pfi.kd", ok, cr.kernelName(d))
		if ok {
			counted++
		}
	}
	require.Equal(t, 10, counted)

}

// Without kernel trace only the counted dispatches are recorded (the
// counter rows need their grid, kernel and timestamps).
func TestCountersWithoutKernelTraceRecordOnlyCountedDispatches(t *testing.T) {
	r := runApp(t, counterVars("pmc: SQ_WAVES", "ROCPROF_KERNEL_FILTER_INCLUDE_REGEX=fill3d"),
		"multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	require.Len(t, cr.dispatches, 4)
	for _, d := range cr.dispatches {
		require.Equal(t, "_Z6fill3dPff.kd", cr.kernelName(d))
		require.Equal(t, modelWaves(d), cr.sums[d.DispatchID]["SQ_WAVES"])
	}
}

// pmc_groups multiplexing: with two groups and an interval of 2, the
// agent's selected dispatches take group 1, 1, 2, 2, 1, 1, ... in the order
// they were submitted (dispatch ids follow submission order per queue, and
// the counted sequence is the agent's).
func TestCountersGroupsAreCycledEveryIntervalDispatches(t *testing.T) {
	r := runApp(t, []string{"ROCPROF_COUNTER_COLLECTION=1", "ROCPROF_KERNEL_TRACE=1",
		"ROCPROF_COUNTER_GROUPS=pmc: SQ_WAVES\npmc: GRBM_COUNT", "ROCPROF_COUNTER_GROUPS_INTERVAL=2"},
		"multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	require.Len(t, cr.dispatches, 22)
	groups := map[string]int{}
	for _, d := range cr.dispatches {
		s := cr.sums[d.DispatchID]
		require.Len(t, s, 1, "one group per dispatch: %v", s)
		if v, ok := s["SQ_WAVES"]; ok {
			require.Equal(t, modelWaves(d), v)
			groups["SQ_WAVES"]++
		} else {
			require.Contains(t, s, "GRBM_COUNT")
			groups["GRBM_COUNT"]++
		}
	}
	// 22 dispatches in runs of two: 12 in the first group, 10 in the second.
	require.Equal(t, map[string]int{"SQ_WAVES": 12, "GRBM_COUNT": 10}, groups)
}

// gfx908 (MI100) through its own build of the sample app: SQ_WAVES per
// dispatch still equals the model (8 SEs, 120 CUs).
func TestCountersOnGfx908(t *testing.T) {
	r := runBuilt(t, counterVars("pmc: SQ_WAVES TCC_HIT", "ROCPROF_KERNEL_TRACE=1", "ROCPROF_VGPU_ARCH=gfx908"),
		"testdata/gfx908/multistream", "2", "3", "4096")
	require.Equal(t, 0, r.exitCode, r.stderr)
	require.Contains(t, r.stdout, "dispatches=12")
	cr := readCounters(t, r.spools)
	// 12 vadd/scale dispatches plus HIP's own blit kernels (hipMemset).
	require.GreaterOrEqual(t, len(cr.dispatches), 12)
	require.Len(t, cr.sums, len(cr.dispatches), "every dispatch counted")
	for _, d := range cr.dispatches {
		s := cr.sums[d.DispatchID]
		waves := modelWaves(d)
		require.Equal(t, waves, s["SQ_WAVES"], cr.kernelName(d))
		// TCC_HIT sums r_j - ceil(r_j/4) over 32 instances of R = 4 x waves.
		hits := 0.0
		for j := 0; j < 32; j++ {
			req := int(4*waves) / 32
			if j < int(4*waves)%32 {
				req++
			}
			hits += float64(req - (req+3)/4)
		}
		require.Equal(t, hits, s["TCC_HIT"], cr.kernelName(d))
	}
}

// The spool's counter samples become counter_collection.csv through the
// CSV writer: one row per dispatch and counter, instances summed.
func TestCountersReachCounterCollectionCSV(t *testing.T) {
	r := runApp(t, counterVars("pmc: SQ_WAVES GPU_UTIL"), "multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	dir := t.TempDir()
	_, err := output.Write(output.Config{Dir: dir, PrefixTemplate: "run",
		Formats: []output.Format{output.FormatCSV}}, r.spools)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, "run_counter_collection.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "Counter_Name", rows[0][15])
	require.Len(t, rows, 1+22*2)
	waves := map[string]string{"vadd(float const*, float const*, float*, int)": "16.000000",
		"scale(float*, float, int)": "16.000000", "fill3d(float*, float)": "64.000000"}
	seen := map[string]int{}
	for _, row := range rows[1:] {
		seen[row[15]]++
		if row[15] == "SQ_WAVES" {
			require.Equal(t, waves[row[8]], row[16], row[8])
		}
	}
	require.Equal(t, map[string]int{"SQ_WAVES": 22, "GPU_UTIL": 22}, seen)
}

// -E extra counters reach the shim as a file (the run's copy); a derived counter over
// two hardware counters evaluates per dispatch, and a device qualifier for a
// GPU that does not exist leaves its counter out.
func TestCountersExtraDefinitionsAndDeviceQualifiers(t *testing.T) {
	extra := `rocprofiler-sdk:
  counters-schema-version: 1
  counters:
    - name: WAVES_PLUS_GRBM
      description: test counter
      definitions:
        - architectures: [gfx90a]
          expression: reduce(SQ_WAVES,sum)+GRBM_COUNT
`
	extraFile := filepath.Join(t.TempDir(), "extra_counters.yaml")
	require.NoError(t, os.WriteFile(extraFile, []byte(extra), 0o600))
	r := runApp(t, counterVars("pmc: WAVES_PLUS_GRBM SQ_WAVES TCC_HIT:device=1",
		"ROCPROF_KERNEL_TRACE=1", "ROCPROF_VGPU_CLOCK=virtual", "ROCPROF_GO_EXTRA_COUNTERS_FILE="+extraFile),
		"multistream", "run", "0")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	require.Len(t, cr.dispatches, 22)
	for _, d := range cr.dispatches {
		s := cr.sums[d.DispatchID]
		waves := modelWaves(d)
		cycles := float64(int64((2000 + 8*waves) * 1700 / 1000))
		require.Equal(t, map[string]float64{"SQ_WAVES": waves, "WAVES_PLUS_GRBM": waves + cycles + 1000}, s,
			cr.kernelName(d))
		require.Equal(t, 1, cr.instances[d.DispatchID]["WAVES_PLUS_GRBM"])
	}
}

// Two GPUs: each gets its own packets, and NAME:device=1 is collected on
// the second GPU only.
func TestCountersPerGPUWithDeviceQualifier(t *testing.T) {
	r := runBuilt(t, counterVars("pmc: SQ_WAVES TCC_HIT:device=1", "ROCPROF_KERNEL_TRACE=1",
		"ROCPROF_VGPU_COUNT=2"), "testdata/devices")
	require.Equal(t, 0, r.exitCode, r.stderr)
	cr := readCounters(t, r.spools)
	nodes := map[uint32]map[string]float64{}
	for _, d := range cr.dispatches {
		if cr.kernelName(d) != "_Z4tinyPi.kd" {
			continue
		}
		nodes[d.AgentNode] = cr.sums[d.DispatchID]
	}
	require.Len(t, nodes, 2, "one tiny kernel per GPU")
	require.Equal(t, map[string]float64{"SQ_WAVES": 1}, nodes[1])
	require.Equal(t, 1.0, nodes[2]["SQ_WAVES"])
	require.Contains(t, nodes[2], "TCC_HIT")
}
