package rocprof_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// buildDir is where `make build` and `make testapps` put their output.
func buildDir() string {
	if d := os.Getenv("ROCPROF_GO_BUILD"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "build")
}

// matrix lists the ROCm runtimes of the matrix tests (each subtest checks
// its own runtime is built) and the repository's top directory.
func matrix(t *testing.T) (repo string, rts []rocmmatrix.Runtime) {
	_, file, _, _ := runtime.Caller(0)
	repo = filepath.Join(filepath.Dir(file), "..", "..")
	rts, err := rocmmatrix.Runtimes(repo, buildDir())
	require.NoError(t, err)
	return repo, rts
}

// libEnv points the run at the freshly built libraries (the embedded ones
// are the same files when the CLI was built by make).
func libEnv(t *testing.T) {
	lib := t.TempDir()
	for _, p := range []string{"lib/librocprof-go-preload.so", "lib/librocprof-go-shim.so", "vgpu/librocprof-go-vgpu.so"} {
		src := filepath.Join(buildDir(), p)
		require.FileExists(t, src, "run make build first")
		require.NoError(t, os.Symlink(src, filepath.Join(lib, filepath.Base(p))))
	}
	t.Setenv("ROCPROF_GO_LIBDIR", lib)
}

// A Go program profiles a sample app on the virtual GPU and reads its
// kernels back through the manifest.
func TestRunAndReadKernelsOnTheVirtualGPU(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", out, "-o", "run"},
	}, []string{filepath.Join(buildDir(), "testdata", "multistream"), "2", "3"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	kernels, err := rocprof.ReadKernels(res.Dir, res.Manifest)
	require.NoError(t, err)
	// 2 streams × 3 iterations × (vadd, scale, one D2D blit copy).
	names := map[string]int{}
	for _, k := range kernels {
		names[k.Name]++
		require.Greater(t, k.EndNs, k.StartNs)
	}
	require.Equal(t, 6, names["vadd(float const*, float const*, float*, int)"])
	require.Equal(t, 6, names["scale(float*, float, int)"])
	require.Len(t, kernels, 18)
}

// --timeout ends an app that sleeps forever in about the timeout, with
// status 124, and everything recorded before is written and counted in
// run.json.
func TestTimeoutWritesEarlierDispatches(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	start := time.Now()
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		// 4 s rather than 2: HIP's start-up alone can take over a second on a
		// loaded 2-core machine, and the app must reach its sleep first.
		Args: []string{"--virtual-gpu", "--kernel-trace", "--timeout", "4s", "-f", "csv", "-d", out, "-o", "run"},
	}, []string{filepath.Join(buildDir(), "testdata", "idle"), "100000"})
	require.NoError(t, err)
	elapsed := time.Since(start)
	require.Equal(t, 124, res.ExitStatus)
	require.True(t, res.Manifest.TimedOut)
	require.Less(t, elapsed, 20*time.Second, "ends near the timeout, not when the app would")
	kernels, err := rocprof.ReadKernels(res.Dir, res.Manifest)
	require.NoError(t, err)
	require.Len(t, kernels, 4, "the four dispatches made before the app went to sleep")
	m, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	require.Equal(t, 124, m.ExitStatus)
	t.Logf("timeout run took %s", elapsed)
}

// run.json's record counts match the files it lists.
func TestManifestCountsMatchFiles(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--kernel-trace", "--hip-trace", "--memory-copy-trace", "--stats", "-f", "csv", "-d", out},
	}, []string{filepath.Join(buildDir(), "testdata", "multistream"), "1", "2"})
	require.NoError(t, err)
	require.NotEmpty(t, res.Manifest.Files)
	for _, f := range res.Manifest.Files {
		data, err := os.ReadFile(filepath.Join(out, f.Path))
		require.NoError(t, err, f.Path)
		rows := strings.Count(string(data), "\n") - 1 // header
		require.EqualValues(t, f.Records, rows, f.Path)
	}
}

// --parquet-hive writes domain=<d>/rank=<n>/host=<host>/ directories, the
// rank taken from the MPI launcher's variables of the profiled process.
func TestParquetHiveByRank(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	env := append(os.Environ(), "OMPI_COMM_WORLD_RANK=3")
	_, err := rocprof.Run(context.Background(), rocprof.Options{
		Args:    []string{"--virtual-gpu", "--kernel-trace", "--parquet-hive", "-f", "parquet", "-d", out, "-o", "run"},
		Environ: env,
	}, []string{filepath.Join(buildDir(), "testdata", "multistream"), "1", "1"})
	require.NoError(t, err)
	host, err := os.Hostname()
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(out, "domain=kernels", "rank=3", "host="+host, "run.parquet"))
}

// The CLI runs an app on the virtual GPU under every runtime of the ROCm
// matrix (HIP compiled with that runtime's hipcc; inside its root, which the
// injected libraries reach through ROCPROF_GO_LIBDIR): the app completes and
// its HIP calls are traced.
func TestVirtualGPUOnEveryRuntime(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			argv := []string{filepath.Join(rt.Apps, "multistream"), "2", "3"}
			if rt.Root != "" {
				argv = append([]string{filepath.Join(repo, "scripts", "rocm-root.sh"), "run", rt.Root, "--"}, argv...)
			}
			out := t.TempDir()
			var stdout strings.Builder
			res, err := rocprof.Run(context.Background(), rocprof.Options{
				Args:   []string{"--virtual-gpu", "--hip-trace", "-f", "csv", "-d", out, "-o", "run"},
				Stdout: &stdout,
			}, argv)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitStatus)
			require.Contains(t, stdout.String(), "streams=2 iterations=3 dispatches=12 copies=24")
			calls := map[string]int{}
			for _, f := range res.Manifest.Files {
				if !strings.HasSuffix(f.Path, "hip_api_trace.csv") {
					continue
				}
				rows := readCSV(t, filepath.Join(res.Dir, f.Path))
				for _, r := range rows[1:] {
					calls[r[1]]++
				}
			}
			require.Equal(t, 24, calls["hipMemcpyAsync"], "ROCm %s: %v", rt.Name, calls)
			require.Equal(t, 12, calls["hipLaunchKernel"], "ROCm %s: %v", rt.Name, calls)
		})
	}
}

func readCSV(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	require.Equal(t, "Function", rows[0][1])
	return rows
}

// The default format (ROCpd) reads back as the CSV does; a run without a
// kernel trace is an error, not zero kernels.
func TestReadKernelsFromTheDefaultFormat(t *testing.T) {
	libEnv(t)
	app := filepath.Join(buildDir(), "testdata", "multistream")
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--kernel-trace", "-d", t.TempDir()},
	}, []string{app, "2", "3"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	kernels, err := rocprof.ReadKernels(res.Dir, res.Manifest)
	require.NoError(t, err)
	require.Len(t, kernels, 18)
	names := map[string]int{}
	for _, k := range kernels {
		names[k.Name]++
		require.Greater(t, k.EndNs, k.StartNs)
		require.Equal(t, "Agent 1", k.Agent)
		if k.Name == "vadd(float const*, float const*, float*, int)" {
			require.Equal(t, [3]uint64{65536, 1, 1}, k.Grid)
			require.Equal(t, [3]uint64{256, 1, 1}, k.Workgroup)
			require.NotZero(t, k.CorrelationID)
		}
	}
	require.Equal(t, 6, names["vadd(float const*, float const*, float*, int)"])
	require.Equal(t, 6, names["scale(float*, float, int)"])

	res, err = rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--hip-trace", "-f", "json", "-d", t.TempDir()},
	}, []string{app, "1", "1"})
	require.NoError(t, err)
	_, err = rocprof.ReadKernels(res.Dir, res.Manifest)
	require.ErrorContains(t, err, "wrote no kernel trace rocprof.ReadKernels reads")
}

// With a per-process placeholder in -d, run.json goes to the directory
// every process's own directory is under (the part of -d before the
// placeholder, other placeholders resolved), not to the working directory,
// and lists the processes' files relative to it.
func TestManifestBesideThePerProcessDirectories(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	host, err := os.Hostname()
	require.NoError(t, err)
	app := filepath.Join(buildDir(), "testdata", "multistream")
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", filepath.Join(out, "prof_%hostname%", "%pid%"), "-o", "run"},
		Dir:  t.TempDir(),
	}, []string{"sh", "-c", app + " 1 1 && " + app + " 1 1"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	top := filepath.Join(out, "prof_"+host)
	require.Equal(t, top, res.Dir)
	m, err := rocprof.LoadManifest(top)
	require.NoError(t, err)
	var traces []string
	for _, f := range m.Files {
		require.FileExists(t, filepath.Join(top, f.Path))
		if strings.HasSuffix(f.Path, "run_kernel_trace.csv") {
			traces = append(traces, f.Path)
		}
	}
	require.Len(t, traces, 2, "one per process, each in its %%pid%% directory: %v", traces)
	for _, p := range traces {
		require.Regexp(t, `^\d+/run_kernel_trace\.csv$`, p)
	}
}
