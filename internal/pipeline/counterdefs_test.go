package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
)

// rocprofiler-compute's way of profiling a pass with rocprofv3: a pass file
// whose pmc: line is followed by rocprof v1's gpu:/range:/kernel: lines, and
// its own counter definitions in $ROCPROFILER_METRICS_PATH/counter_defs.yaml
// (then deleted): SQC_DCACHE_INFLIGHT_LEVEL_ACCUM, an accumulate(X,
// HIGH_RES) of an SQ event past AQLprofile's table maximum, and TCC_HIT[3],
// one TCC channel selected by name. On the virtual GPU (gfx90a) every
// dispatch of multistream (96) gets both; GRBM_COUNT, which the file does not
// define, is unknown, as it is to rocprofiler-sdk with that file.
func TestMetricsPathDefinitionsOnTheVirtualGPU(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "multistream")
	metrics := t.TempDir()
	defs, err := os.ReadFile(filepath.Join("..", "..", "testdata", "counters", "metrics", options.CounterDefsFileName))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(metrics, options.CounterDefsFileName), defs, 0o600))
	t.Setenv(options.MetricsPathEnv, metrics)

	input := filepath.Join(t.TempDir(), "pmc_perf_0.txt")
	require.NoError(t, os.WriteFile(input, []byte("pmc: SQC_DCACHE_INFLIGHT_LEVEL_ACCUM TCC_HIT[3] SQ_WAVES\n\ngpu:\nrange:\nkernel:\n"), 0o600))
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &bytes.Buffer{},
		Args: []string{"--virtual-gpu", "-i", input, "-f", "csv", "-d", out, "-o", "run"}}, []string{app})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	rows := readCSV(t, filepath.Join(out, "pmc_1", "run_counter_collection.csv"))
	perCounter := map[string]int{}
	for _, n := range column(rows, "Counter_Name") {
		perCounter[n]++
	}
	require.Equal(t, map[string]int{"SQC_DCACHE_INFLIGHT_LEVEL_ACCUM": 96, "TCC_HIT[3]": 96, "SQ_WAVES": 96}, perCounter)

	_, err = Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &bytes.Buffer{},
		Args: []string{"--virtual-gpu", "--pmc", "GRBM_COUNT", "-d", t.TempDir()}}, []string{app})
	require.ErrorContains(t, err, "GRBM_COUNT")

	require.NoError(t, os.Remove(filepath.Join(metrics, options.CounterDefsFileName)))
	_, err = Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &bytes.Buffer{},
		Args: []string{"--virtual-gpu", "--pmc", "SQ_WAVES", "-d", t.TempDir()}}, []string{app})
	require.ErrorContains(t, err, "ROCPROFILER_METRICS_PATH="+metrics)
	require.ErrorContains(t, err, "unset ROCPROFILER_METRICS_PATH to use the built-in ones")
}

// An -E file larger than one environment variable can hold (Linux: 128
// KiB; rocprofiler-compute's definitions are about 280 KiB) reaches the
// shim: before, the app could not even start ("argument list too long").
func TestLargeExtraCountersFile(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "multistream")
	var b strings.Builder
	b.WriteString("rocprofiler-sdk:\n  counters-schema-version: 1\n  counters:\n")
	for i := 0; b.Len() < 300<<10; i++ {
		fmt.Fprintf(&b, "  - name: WAVES_TIMES_%d\n    description: SQ_WAVES times %d, one of many definitions that make this file larger than an environment variable may be\n    definitions:\n    - architectures: [gfx90a]\n      expression: reduce(SQ_WAVES,sum)*%d\n", i, i, i)
	}
	extra := filepath.Join(t.TempDir(), "extra.yaml")
	require.NoError(t, os.WriteFile(extra, []byte(b.String()), 0o600))
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &bytes.Buffer{},
		Args: []string{"--virtual-gpu", "-E", extra, "--pmc", "WAVES_TIMES_3", "-f", "csv", "-d", out, "-o", "run"}}, []string{app})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	rows := readCSV(t, filepath.Join(out, "run_counter_collection.csv"))
	require.Equal(t, 1+96, len(rows), "every dispatch counted")
	require.Equal(t, []string{"WAVES_TIMES_3"}, uniq(column(rows, "Counter_Name")))
	require.Contains(t, column(rows, "Counter_Value"), "3072.000000", "vadd's 1024 waves, times 3")
}
