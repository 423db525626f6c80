package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// TestKernelFiltersOnTheVirtualGPU: with -T the kernel filters match the
// truncated names, as rocprofv3 does (-T --kernel-include-regex '^vadd$'
// counts multistream's 32 vadd dispatches); a filter that selects no kernel
// of the run is a warning at the end, naming the filter and the names it
// was matched against.
func TestKernelFiltersOnTheVirtualGPU(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "multistream")
	run := func(args ...string) (string, string) {
		out := t.TempDir()
		var progress bytes.Buffer
		res, err := Run(context.Background(), Options{Stdout: &bytes.Buffer{}, Progress: &progress,
			Args: append([]string{"--virtual-gpu", "--pmc", "SQ_WAVES", "-f", "csv", "-d", out, "-o", "run"}, args...)},
			[]string{app})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitStatus)
		return out, progress.String()
	}

	out, said := run("-T", "--kernel-include-regex", "^vadd$")
	rows := readCSV(t, filepath.Join(out, "run_counter_collection.csv"))
	require.Len(t, rows, 1+32, "every vadd dispatch counted")
	require.Equal(t, []string{"vadd"}, uniq(column(rows, "Kernel_Name")))
	require.Equal(t, []string{"1024.000000"}, uniq(column(rows, "Counter_Value")), "the model's waves of each dispatch")
	require.NotContains(t, said, "warning")

	// Without -T the same regex matches nothing: the demangled name is
	// "vadd(float const*, float const*, float*, int)".
	out, said = run("--kernel-include-regex", "^vadd$")
	require.NoFileExists(t, filepath.Join(out, "run_counter_collection.csv"))
	// 17 kernels: multistream's 3 (vadd, scale, tiny) and HIP's 14 blit
	// kernels, the app's listed first.
	require.Contains(t, said, `rocprof-go: warning: --kernel-include-regex "^vadd$" selected none of the 17 kernels the app loaded`)
	require.Contains(t, said, "their demangled names: scale(float*, float, int); tiny(int*); vadd(float const*, float const*, float*, int); __amd_rocclr_")
	require.Contains(t, said, "and 9 more. Fix the regular expression")

	_, said = run("-T", "--kernel-exclude-regex", ".")
	require.Contains(t, said, `--kernel-exclude-regex "." selected none of the 17 kernels the app loaded`)
	require.Contains(t, said, "their names as -T truncates them: scale; tiny; vadd; __amd_rocclr_")
}
