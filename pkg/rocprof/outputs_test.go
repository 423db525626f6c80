package rocprof

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

// builtLibDir gathers the libraries `make build` produced (the preload
// library, the shim and the virtual GPU) into one directory for
// launch.LibDirEnv, so tests run the real profiler on the virtual GPU.
func builtLibDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	build := filepath.Join(filepath.Dir(file), "..", "..", "build")
	dir := t.TempDir()
	for _, p := range []string{"lib/" + launch.PreloadLib, "lib/" + launch.ShimLib,
		"vgpu/" + launch.VGPULib, "lib/" + launch.ROCTxLib} {
		src, err := filepath.Abs(filepath.Join(build, p))
		require.NoError(t, err)
		_, err = os.Stat(src)
		require.NoError(t, err, "%s is missing: run `make build testapps`", src)
		require.NoError(t, os.Symlink(src, filepath.Join(dir, filepath.Base(p))))
	}
	return dir
}

func sampleApp(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "build", "testdata", name))
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.NoError(t, err, "%s is missing: run `make testapps`", p)
	return p
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.LazyQuotes = true
	rows, err := r.ReadAll()
	require.NoError(t, err)
	return rows
}

func column(rows [][]string, name string) []string {
	col := -1
	for i, h := range rows[0] {
		if h == name {
			col = i
		}
	}
	var out []string
	for _, r := range rows[1:] {
		if col >= 0 {
			out = append(out, r[col])
		}
	}
	return out
}

// TestKernelRenameOnTheVirtualGPU: hip_calls_counts launches its six kernels
// inside push "outer" { push "inner" { ... } }: with --kernel-rename every
// dispatch is named "inner", in kernel_trace.csv and kernel_stats.csv.
func TestKernelRenameOnTheVirtualGPU(t *testing.T) {
	t.Setenv(launch.LibDirEnv, builtLibDir(t))
	app := sampleApp(t, "hip_calls_counts")
	for _, rename := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"--virtual-gpu", "--marker-trace", "--kernel-trace", "--stats", "-f", "csv",
			"-d", out, "-o", "run"}
		if rename {
			args = append(args, "--kernel-rename")
		}
		res, err := Run(context.Background(), Options{Args: args}, []string{app})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitStatus)
		names := column(readCSV(t, filepath.Join(out, "run_kernel_trace.csv")), "Kernel_Name")
		require.Len(t, names, 6)
		stats := column(readCSV(t, filepath.Join(out, "run_kernel_stats.csv")), "Name")
		require.Len(t, stats, 1)
		for _, n := range names {
			if rename {
				require.Equal(t, "inner", n)
			} else {
				require.Contains(t, n, "hip_calls_add")
			}
		}
		require.Equal(t, names[0], stats[0])
	}
}
