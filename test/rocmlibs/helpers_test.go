package rocmlibs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"

	"github.com/rocprof-go/rocprof-go/internal/kernelname"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// runTimeout bounds one run of a program: it only catches hangs (the
// machine may be shared and loaded), it is no speed check.
const runTimeout = 10 * time.Minute

// runtimesWith returns the runtimes of the matrix whose entry in
// configs/rocm-matrix.tsv installs a package named pkg (a shell pattern):
// the runtimes a library's test runs on. The issue asks for two at least.
func runtimesWith(t *testing.T, pkg string) []rocmmatrix.Runtime {
	repo := testsys.RepoRoot(t)
	f, err := os.Open(filepath.Join(repo, "configs", "rocm-matrix.tsv"))
	require.NoError(t, err)
	defer f.Close()
	has := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if ok, _ := filepath.Match(pkg, fields[1]); ok {
			has[fields[0]] = true
		}
	}
	require.NoError(t, sc.Err())
	rts, err := rocmmatrix.Ready(repo, testsys.BuildDir(t))
	require.NoError(t, err, "build the ROCm matrix: `make rocm-roots rocm-testapps` (as root)")
	var out []rocmmatrix.Runtime
	for _, rt := range rts {
		if has[rt.Name] {
			out = append(out, rt)
		}
	}
	require.GreaterOrEqual(t, len(out), 2, "configs/rocm-matrix.tsv installs %s in fewer than two runtimes", pkg)
	return out
}

// inRoot returns the one file of the runtime's root matching pattern (an
// absolute path inside the root), as the program sees it.
func inRoot(t *testing.T, rt rocmmatrix.Runtime, pattern string) string {
	matches, err := filepath.Glob(filepath.Join(rt.Root, pattern))
	require.NoError(t, err)
	require.Len(t, matches, 1, "ROCm %s: want one %s in %s; rebuild the root with `make rocm-roots` (as root)", rt.Name, pattern, rt.Root)
	return strings.TrimPrefix(matches[0], rt.Root)
}

// program is one program of a library, run on one runtime's root.
type program struct {
	rt   rocmmatrix.Runtime
	argv []string // the program (a path inside the root) and its arguments
	arch string   // --virtual-gpu architecture
	gpus int      // virtual GPUs (ROCPROF_VGPU_COUNT)
}

type result struct {
	exit           int
	stdout, stderr string
	out            string // rocprof-go's output directory (profiled runs)
	logs           string // the virtual GPU's packet logs, one per process
	spools         string // ROCPROF_GO_KEEP_SPOOLS (profiled runs)
}

// tempDir is a fresh directory that the root sees at the same path.
func tempDir(t *testing.T, rt *rocmmatrix.Runtime) string {
	d := t.TempDir()
	*rt = rt.WithBinds(d)
	return d
}

func (p program) run(t *testing.T, argv []string, env []string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := p.rt.Command(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "ROCm %s: %v did not finish within %s; stderr:\n%s", p.rt.Name, argv, runTimeout, errb.String())
	res := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.exit = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return res
}

// vgpuEnv configures the virtual GPU and its packet log.
func (p program) vgpuEnv(logs string) []string {
	return []string{"ROCPROF_VGPU_COUNT=" + strconv.Itoa(p.gpus), "ROCPROF_VGPU_LOG=" + filepath.Join(logs, "vgpu-%p.log")}
}

// bare runs the program on the virtual GPU without the profiler.
func (p program) bare(t *testing.T) result {
	logs := tempDir(t, &p.rt)
	env := append(p.vgpuEnv(logs), "LD_PRELOAD="+testsys.Artifact(t, "vgpu/librocprof-go-vgpu.so"), "ROCPROF_VGPU_ARCH="+p.arch)
	res := p.run(t, p.argv, env)
	res.logs = logs
	return res
}

// profiled runs it under `rocprof-go --virtual-gpu=ARCH --sys-trace --stats
// -f csv`, with the freshly built libraries (ROCPROF_GO_LIBDIR), keeping
// the spools, plus env.
func (p program) profiled(t *testing.T, env ...string) result {
	logs, out, spools := tempDir(t, &p.rt), tempDir(t, &p.rt), tempDir(t, &p.rt)
	libs := tempDir(t, &p.rt)
	for _, rel := range []string{"lib/librocprof-go-preload.so", "lib/librocprof-go-shim.so", "vgpu/librocprof-go-vgpu.so"} {
		require.NoError(t, os.Symlink(testsys.Artifact(t, rel), filepath.Join(libs, filepath.Base(rel))))
	}
	env = append(append(p.vgpuEnv(logs), "ROCPROF_GO_LIBDIR="+libs, "ROCPROF_GO_KEEP_SPOOLS="+spools), env...)
	argv := append([]string{testsys.Artifact(t, "rocprof-go"), "--virtual-gpu=" + p.arch, "--sys-trace", "--stats",
		"-f", "csv", "-d", out, "-o", "run", "--"}, p.argv...)
	res := p.run(t, argv, env)
	res.out, res.logs, res.spools = out, logs, spools
	return res
}

// sameOutcome checks that the profiled run exited as the bare one did and
// printed the line that says the program did its work.
func sameOutcome(t *testing.T, bare, prof result, done *regexp.Regexp) {
	t.Helper()
	require.Equal(t, 0, bare.exit, "without the profiler; stderr:\n%s", bare.stderr)
	require.Equal(t, bare.exit, prof.exit, "under the profiler; stderr:\n%s", prof.stderr)
	require.Regexp(t, done, bare.stdout)
	require.Regexp(t, done, prof.stdout)
}

// dispatch is one kernel dispatch of the virtual GPU's packet log.
type dispatch struct {
	GPU   int    `json:"gpu"`
	Name  string `json:"name"`
	Start uint64 `json:"start_ts"`
	Type  string `json:"type"`
	Pid   int    `json:"pid"`
}

// loggedKernels returns, per GPU in start order, the kernels the virtual
// GPU ran for the programs' code objects. Dispatches without a name are
// ROCR's own blit kernels (its copy path on internal queues), which no
// program launches and no profiler reports as kernels.
func loggedKernels(t *testing.T, logs string) map[int][]string {
	paths, err := filepath.Glob(filepath.Join(logs, "vgpu-*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no packet log in %s", logs)
	by := map[int][]dispatch{}
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if !bytes.Contains(sc.Bytes(), []byte(`"type":"dispatch"`)) {
				continue
			}
			var d dispatch
			require.NoError(t, json.Unmarshal(sc.Bytes(), &d), sc.Text())
			if d.Name != "" {
				by[d.GPU] = append(by[d.GPU], d)
			}
		}
		require.NoError(t, sc.Err())
		f.Close()
	}
	out := map[int][]string{}
	for g, ds := range by {
		sort.SliceStable(ds, func(i, j int) bool {
			return ds[i].Start < ds[j].Start || ds[i].Start == ds[j].Start && ds[i].Name < ds[j].Name
		})
		for _, d := range ds {
			out[g] = append(out[g], kernelname.Format(d.Name, false, false))
		}
	}
	return out
}

// table is one CSV output file, rows as column -> value.
type table []map[string]string

func readCSV(t *testing.T, dir, name string) table {
	path := filepath.Join(dir, "run_"+name+".csv")
	f, err := os.Open(path)
	require.NoError(t, err, "%s was not written", name)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	var tab table
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		tab = append(tab, m)
	}
	return tab
}

// launcher says which HIP functions may launch the kernels whose demangled
// name matches re.
type launcher struct {
	re  *regexp.Regexp
	fns []string
}

// blitLauncher: HIP's own blit kernels come from its copies and fills.
var blitLauncher = launcher{regexp.MustCompile(`^__amd_rocclr_`),
	[]string{"hipMemcpy", "hipMemcpyAsync", "hipMemcpyHtoD", "hipMemcpyDtoH", "hipMemcpyDtoD", "hipMemset",
		"hipMemsetAsync", "hipMemsetD32", "hipMemsetD32Async", "hipMemcpy2D", "hipMemcpy2DAsync"}}

// checkKernels compares the kernel trace with the packet log: per GPU, the
// same kernels in the same order under the same names; and every kernel
// carries the correlation id of a HIP call in the HIP trace that may launch
// it (launchers; each kernel must match one). It returns the kernels by
// name and the HIP function of each correlation id.
func checkKernels(t *testing.T, res result, launchers ...launcher) (map[string]int, map[string]string) {
	t.Helper()
	kernels := readCSV(t, res.out, "kernel_trace")
	hip := map[string]string{}
	for _, r := range readCSV(t, res.out, "hip_api_trace") {
		hip[r["Correlation_Id"]] = r["Function"]
	}
	type row struct {
		start uint64
		name  string
	}
	byAgent := map[string][]row{}
	names := map[string]int{}
	for _, k := range kernels {
		start, err := strconv.ParseUint(k["Start_Timestamp"], 10, 64)
		require.NoError(t, err)
		byAgent[k["Agent_Id"]] = append(byAgent[k["Agent_Id"]], row{start, k["Kernel_Name"]})
		names[k["Kernel_Name"]]++
		fn, ok := hip[k["Correlation_Id"]]
		require.True(t, ok, "kernel %s: correlation id %s is no HIP call of the trace", k["Kernel_Name"], k["Correlation_Id"])
		matched := false
		for _, l := range append([]launcher{blitLauncher}, launchers...) {
			if l.re.MatchString(k["Kernel_Name"]) {
				require.Contains(t, l.fns, strings.TrimSuffix(fn, "_spt"), "kernel %s launched by %s", k["Kernel_Name"], fn)
				matched = true
				break
			}
		}
		require.True(t, matched, "kernel %s (launched by %s) is none the test expects", k["Kernel_Name"], fn)
	}
	logged := loggedKernels(t, res.logs)
	require.Len(t, byAgent, len(logged), "GPUs with kernels: trace %v, packet log %d GPUs", keys(byAgent), len(logged))
	for g, want := range logged {
		// GPU g is KFD node g+1: "Agent g+1" with the default relative indexing.
		rows := byAgent[fmt.Sprintf("Agent %d", g+1)]
		sort.SliceStable(rows, func(i, j int) bool {
			return rows[i].start < rows[j].start || rows[i].start == rows[j].start && rows[i].name < rows[j].name
		})
		got := make([]string, len(rows))
		for i, r := range rows {
			got[i] = r.name
		}
		require.Equal(t, want, got, "GPU %d: kernels of the trace, in start order, against the packet log", g)
	}
	for _, f := range []string{"kernel_stats", "hip_api_stats", "domain_stats"} {
		require.NotEmpty(t, readCSV(t, res.out, f), "--stats: %s", f)
	}
	return names, hip
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func count(m map[string]int, re *regexp.Regexp) int {
	n := 0
	for k, v := range m {
		if re.MatchString(k) {
			n += v
		}
	}
	return n
}
