package reliability

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
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// runTimeout bounds one profiled run. The machine running the tests may be
// shared and heavily loaded: this only catches hangs, it is not a speed check.
const runTimeout = 8 * time.Minute

// buildDir is where make put the CLI, libraries and sample apps:
// $ROCPROF_GO_BUILD, else <repo>/build.
func buildDir(t testing.TB) string {
	if d := os.Getenv("ROCPROF_GO_BUILD"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(t), "build")
}

func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// artifact is a build product; a missing one names the make target to run.
func artifact(t testing.TB, rel string) string {
	p := filepath.Join(buildDir(t), rel)
	_, err := os.Stat(p)
	require.NoError(t, err, "%s is missing: run `make build testapps` (or `make test`)", p)
	return p
}

func cli(t testing.TB) string           { return artifact(t, "rocprof-go") }
func app(t testing.TB, n string) string { return artifact(t, filepath.Join("testdata", n)) }

// profiled is one rocprof-go invocation.
type profiled struct {
	opts []string // rocprof-go options (before --); -d is added
	argv []string // the app and its arguments
	env  []string // extra NAME=value for rocprof-go (and so the app)
	dir  string   // output directory; a fresh temporary one when empty
}

// result is what a profiled run left behind.
type result struct {
	exit     int
	stdout   string
	stderr   string
	dir      string
	duration time.Duration
}

func (p profiled) command(ctx context.Context, t testing.TB) (*exec.Cmd, string) {
	dir := p.dir
	if dir == "" {
		dir = t.TempDir()
	}
	args := append([]string{"--virtual-gpu", "-d", dir}, p.opts...)
	args = append(append(args, "--"), p.argv...)
	cmd := exec.CommandContext(ctx, cli(t), args...)
	cmd.Env = append(os.Environ(), p.env...)
	// Its own process group: a test never signals the go test process, and
	// the whole tree can be killed if a run hangs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, dir
}

// run runs rocprof-go to completion and returns its exit status and output.
func (p profiled) run(t testing.TB) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd, dir := p.command(ctx, t)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := result{exit: exitCode(t, err), stdout: out.String(), stderr: errb.String(), dir: dir, duration: time.Since(start)}
	require.NoError(t, ctx.Err(), "rocprof-go %v did not finish within %s: stderr:\n%s", p.argv, runTimeout, res.stderr)
	return res
}

func exitCode(t testing.TB, err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "running rocprof-go: %v", err)
	return ee.ExitCode()
}

// startWithProgress starts rocprof-go on an app that prints progress lines
// and returns a channel of those lines (closed at EOF) and a wait function.
func (p profiled) startWithProgress(t testing.TB) (<-chan string, func() result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	cmd, dir := p.command(ctx, t)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1<<16)
	var all strings.Builder
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			lines <- sc.Text()
		}
	}()
	wait := func() result {
		defer cancel()
		<-readDone
		err := cmd.Wait()
		res := result{exit: exitCode(t, err), stdout: all.String(), stderr: errb.String(), dir: dir, duration: time.Since(start)}
		require.NoError(t, ctx.Err(), "rocprof-go %v did not finish within %s: stderr:\n%s", p.argv, runTimeout, res.stderr)
		return res
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	return lines, wait
}

// intField returns the integer after "name=" in the app's output (the last
// occurrence), failing when there is none.
func intField(t testing.TB, out, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?:^|\s)`+regexp.QuoteMeta(name)+`=(-?\d+)`).FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, m, "no %s= in the app's output:\n%s", name, out)
	n, err := strconv.Atoi(m[len(m)-1][1])
	require.NoError(t, err)
	return n
}

// table is one CSV file: its header and rows.
type table struct {
	path   string
	header []string
	rows   [][]string
}

func (tb *table) col(t testing.TB, name string) int {
	for i, h := range tb.header {
		if h == name {
			return i
		}
	}
	require.Failf(t, "missing column", "%s has no column %q: %v", tb.path, name, tb.header)
	return -1
}

// where returns the rows whose column name has the given value.
func (tb *table) where(t testing.TB, name, value string) [][]string {
	c := tb.col(t, name)
	var out [][]string
	for _, r := range tb.rows {
		if r[c] == value {
			out = append(out, r)
		}
	}
	return out
}

func readCSV(t testing.TB, path string) *table {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, "%s is not valid CSV", path)
	require.NotEmpty(t, recs, "%s has no header", path)
	return &table{path: path, header: recs[0], rows: recs[1:]}
}

// outputs is the set of CSV files a run wrote, per process id and name
// (kernel_trace, hip_api_trace, ...), under the default %hostname%/%pid% prefix.
type outputs map[int]map[string]*table

func readOutputs(t testing.TB, dir string) outputs {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*", "*_*.csv"))
	require.NoError(t, err)
	out := outputs{}
	for _, p := range paths {
		pidStr, name, ok := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".csv"), "_")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil {
			continue
		}
		if out[pid] == nil {
			out[pid] = map[string]*table{}
		}
		out[pid][name] = readCSV(t, p)
	}
	return out
}

// pids lists the processes that wrote a given file, in ascending order.
func (o outputs) pids(name string) []int {
	var ps []int
	for pid, files := range o {
		if files[name] != nil {
			ps = append(ps, pid)
		}
	}
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			if ps[j] < ps[i] {
				ps[i], ps[j] = ps[j], ps[i]
			}
		}
	}
	return ps
}

// appKernels counts a process's dispatches of the app's own kernels: the
// runtime's blit kernels (__amd_rocclr_*, device-to-device copies) are
// dispatches too, but the app does not count them.
func (o outputs) appKernels(t testing.TB, pid int) int {
	kt := o[pid]["kernel"+"_trace"]
	if kt == nil {
		return 0
	}
	c := kt.col(t, "Kernel_Name")
	n := 0
	for _, r := range kt.rows {
		if !strings.HasPrefix(r[c], "__amd_rocclr_") {
			n++
		}
	}
	return n
}

// apiCalls counts a process's rows of one HIP function.
func (o outputs) apiCalls(t testing.TB, pid int, function string) int {
	ht := o[pid]["hip_api_trace"]
	if ht == nil {
		return 0
	}
	return len(ht.where(t, "Function", function))
}

func readManifest(t testing.TB, dir string) *rocprof.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rocprof.ManifestName))
	require.NoError(t, err)
	var m rocprof.Manifest
	require.NoError(t, json.Unmarshal(data, &m), "run.json is not valid JSON")
	return &m
}

// requireManifestMatches checks that every file run.json lists exists and
// holds the record count it states (CSV rows).
func requireManifestMatches(t testing.TB, dir string, m *rocprof.Manifest) {
	t.Helper()
	for _, f := range m.Files {
		p := filepath.Join(dir, f.Path)
		_, err := os.Stat(p)
		require.NoError(t, err, "run.json lists %s", f.Path)
		if f.Format == "csv" {
			require.EqualValues(t, f.Records, len(readCSV(t, p).rows), "records of %s", f.Path)
		}
	}
}

// report logs one measured result in a fixed form; docs/reliability.md is
// filled from these lines (go test -v ./test/reliability | grep RESULT).
func report(t testing.TB, format string, a ...any) {
	t.Helper()
	t.Logf("RESULT %s: %s", t.Name(), fmt.Sprintf(format, a...))
}

// waitProgress reads progress lines until the app reports at least min
// completed dispatches; it returns the app's pid and the last count seen.
func waitProgress(t testing.TB, lines <-chan string, min int) (pid, done int) {
	t.Helper()
	deadline := time.After(runTimeout)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the app ended before reporting %d dispatches", min)
			if v, ok := strings.CutPrefix(l, "pid="); ok {
				pid, _ = strconv.Atoi(v)
			}
			if v, ok := strings.CutPrefix(l, "progress dispatches="); ok {
				done, _ = strconv.Atoi(v)
				if done >= min {
					require.NotZero(t, pid, "the app printed no pid= line")
					return pid, done
				}
			}
		case <-deadline:
			require.FailNow(t, "no progress", "the app did not reach %d dispatches within %s", min, runTimeout)
		}
	}
}

// drain consumes the remaining lines and returns the last progress count.
func drain(lines <-chan string, last int) int {
	for l := range lines {
		if v, ok := strings.CutPrefix(l, "progress dispatches="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				last = n
			}
		}
	}
	return last
}
