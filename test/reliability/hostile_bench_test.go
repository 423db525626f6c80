package reliability

// The hostile-environment benchmark (issue 19): the faults the issue
// measured before its fixes, rerun with their figures. Each test prints
// RESULT lines that docs/reliability.md's "Hostile environments, measured"
// table is filled from. They are long (600,000 dispatches, 130,000 thread
// ids, 20 concurrent runs) and mount file systems, so they run only when
// ROCPROF_GO_RELIABILITY_BENCH=1, which `make reliability-bench` sets: never
// in CI's `go test ./...`.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// benchEnv gates the hostile benchmark.
const benchEnv = "ROCPROF_GO_RELIABILITY_BENCH"

func hostile(t *testing.T) {
	t.Helper()
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("a long benchmark: run it with `make reliability-bench` (%s=1)", benchEnv)
	}
}

// benchInt is an integer from the environment, else def.
func benchInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// measured is one command's outcome with its wall time and peak memory.
type measured struct {
	exit           int
	stdout, stderr string
	wall           time.Duration
	maxRSSKiB      int64
}

// measure runs a command to completion (at most limit) and reports its
// exit status, output, wall time and peak resident memory (getrusage).
func measure(t *testing.T, limit time.Duration, env []string, name string, args ...string) measured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	m := measured{stdout: out.String(), stderr: errb.String(), wall: time.Since(start)}
	require.NoError(t, ctx.Err(), "%s %v did not finish within %s (a hang): stderr:\n%s", name, args, limit, m.stderr)
	m.exit = exitCode(t, err)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.maxRSSKiB = ru.Maxrss
	}
	return m
}

// recordsByDomain sums run.json's record counts per domain, concurrent
// runs included.
func recordsByDomain(t *testing.T, dir string) map[string]int {
	m := readManifest(t, dir)
	out := map[string]int{}
	for _, r := range append(m.Concurrent, *m) {
		for _, f := range r.Files {
			if f.Format == "csv" && !strings.HasSuffix(f.Path, "agent_info.csv") {
				out[f.Domain] += int(f.Records)
			}
		}
	}
	return out
}

// droppedIn sums run.json's lost_records (dropped, torn, invalid chunks).
func droppedIn(t *testing.T, dir string) (dropped, torn uint64) {
	for _, l := range readManifest(t, dir).LostRecords {
		dropped += l.Dropped
		torn += l.Torn
	}
	return dropped, torn
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// keptDir is the spool directory a failed run's message names.
var keptDir = regexp.MustCompile(`the recorded data is kept in (\S+)\)`)

// spoolCounts counts the published dispatches and API calls of every
// spool under dir.
func spoolCounts(t *testing.T, dir string) (dispatches, api uint64) {
	paths, err := tracing.List(dir)
	require.NoError(t, err)
	for _, p := range paths {
		r, err := tracing.Open(p)
		require.NoError(t, err)
		for r.Next() {
		}
		st := r.Stats()
		dispatches += st.Count(tracing.KindKernelDispatch)
		api += st.Count(tracing.KindHIPAPI)
		r.Close()
	}
	return dispatches, api
}

// Issue 19, figure 1: 600,000 dispatches and 1.8M HIP calls with a 64 MiB
// spool file system (Docker's default /dev/shm). Before: 310,076 of 600,000
// dispatches and 930,178 of 1,800,014 calls kept, exit 0, no warning; with
// 1 MiB nothing at all, exit 0.
func TestHostileSmallSpoolFileSystem(t *testing.T) {
	hostile(t)
	n := benchInt("ROCPROF_GO_BENCH_DISPATCHES", 600000)
	argv := []string{app(t, "tiny_kernels"), strconv.Itoa(n)}
	opts := []string{"--kernel-trace", "--hip-trace", "-f", "csv"}
	base := profiled{opts: opts, argv: argv}.run(t)
	require.Equal(t, 0, base.exit, "stderr:\n%s", base.stderr)
	want := recordsByDomain(t, base.dir)
	total := sumValues(want)
	report(t, "unconstrained: exit %d, %v (%d records), %.1f s", base.exit, want, total, base.duration.Seconds())

	// The user's choice: ROCPROF_GO_SPOOL_ROOT on a 64 MiB file system.
	t.Run("forced-64MiB", func(t *testing.T) {
		mnt := testsys.SmallTmpfs(t, "64m")
		res := profiled{opts: opts, argv: argv, env: []string{"ROCPROF_GO_SPOOL_ROOT=" + mnt}}.run(t)
		got := recordsByDomain(t, res.dir)
		dropped, torn := droppedIn(t, res.dir)
		kept := sumValues(got)
		report(t, "exit %d; kept %v (%d) + dropped %d (torn %d) = %d of %d; %.1f s; message: %q",
			res.exit, got, kept, dropped, torn, uint64(kept)+dropped+torn, total, res.duration.Seconds(),
			firstLine(res.stderr, "dropped"))
		if dropped+torn == 0 {
			require.Equal(t, want, got, "nothing dropped, so everything kept")
		} else {
			require.NotEqual(t, 0, res.exit, "records were dropped: the run fails")
			// The recorder counts every record it could not store; a
			// dropped record that is not a row of its own (a name string)
			// makes the sum exceed the rows by that much.
			require.GreaterOrEqual(t, uint64(kept)+dropped+torn, uint64(total), "kept + dropped covers what the app did")
			require.LessOrEqual(t, uint64(kept)+dropped+torn, uint64(total)+16)
		}
	})

	// The automatic choice: a private mount namespace whose /dev/shm is a
	// 64 MiB (then 1 MiB) tmpfs, no ROCPROF_GO_SPOOL_ROOT: the spools go to
	// TMPDIR, which has room.
	for _, size := range []string{"64m", "1m"} {
		t.Run("automatic-"+size, func(t *testing.T) {
			require.Equal(t, 0, os.Geteuid(), "mounting over /dev/shm in a private namespace needs root")
			dir := t.TempDir()
			args := append([]string{"-m", "--propagation", "private", "sh", "-c",
				`mount -t tmpfs -o size=` + size + ` tmpfs /dev/shm && df -k /dev/shm | tail -1 >&2 && exec "$@"`, "sh",
				cli(t), "--virtual-gpu", "-d", dir}, opts...)
			args = append(append(args, "--"), argv...)
			res := measure(t, runTimeout, []string{"ROCPROF_GO_SPOOL_ROOT="}, "unshare", args...)
			got := recordsByDomain(t, dir)
			dropped, torn := droppedIn(t, dir)
			report(t, "/dev/shm a %s tmpfs (%s): exit %d; kept %v (%d of %d), dropped %d, torn %d; %.1f s",
				size, strings.Join(strings.Fields(firstLine(res.stderr, "tmpfs")), " "), res.exit, got, sumValues(got), total, dropped, torn, res.wall.Seconds())
			require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
			require.Equal(t, want, got)
		})
	}

	t.Run("forced-1MiB", func(t *testing.T) {
		mnt := testsys.SmallTmpfs(t, "1m")
		res := profiled{opts: opts, argv: argv, env: []string{"ROCPROF_GO_SPOOL_ROOT=" + mnt}}.run(t)
		report(t, "exit %d in %.2f s; app output %q; message: %q", res.exit, res.duration.Seconds(),
			strings.TrimSpace(res.stdout), firstLine(res.stderr, "error"))
		require.Equal(t, 1, res.exit)
		require.NotContains(t, res.stdout, "dispatches=", "the app did not run")
	})
}

// Issue 19, figure 2: the output file system fills up, each format in turn.
// The run exits 1, nothing is half-written, and the kept spool converts.
func TestHostileFullOutputDisk(t *testing.T) {
	hostile(t)
	formats := map[string][]string{
		"csv":     {"out_kernel_trace.csv", "out_hip_api_trace.csv"},
		"json":    {"out_results.json"},
		"pftrace": {"out_results.pftrace"},
		"otf2":    {"out_results.otf2", "out_results.def", "out_results"},
		"rocpd":   {"out_results.db"},
		"parquet": {"out_kernels.parquet", "out_hip_api.parquet"},
	}
	for _, format := range []string{"csv", "json", "pftrace", "otf2", "rocpd", "parquet"} {
		t.Run(format, func(t *testing.T) {
			mnt := testsys.SmallTmpfs(t, "64k")
			res := profiled{opts: []string{"--kernel-trace", "--hip-trace", "-o", "out", "-f", format},
				argv: []string{app(t, "tiny_kernels"), "5000"}, dir: mnt}.run(t)
			m := keptDir.FindStringSubmatch(res.stderr)
			require.NotNil(t, m, "the error names the kept spool:\n%s", res.stderr)
			t.Cleanup(func() { os.RemoveAll(filepath.Dir(m[1])) })
			require.Equal(t, 1, res.exit)
			for _, f := range formats[format] {
				_, err := os.Lstat(filepath.Join(mnt, f))
				require.True(t, os.IsNotExist(err), "%s is left under its final name", f)
			}
			requireNoTemporaryFiles(t, mnt)
			left := names(t, mnt)
			dispatches, api := spoolCounts(t, m[1])

			// The kept directory converts, into the same format and into CSV
			// (whose rows are counted).
			out := t.TempDir()
			conv := measure(t, runTimeout, nil, cli(t), "convert", "-i", m[1], "-f", format, "-f", "csv", "-d", out, "-q")
			require.Equal(t, 0, conv.exit, "convert: %s", conv.stderr)
			rows := map[string]int{}
			for _, name := range []string{"kernel_trace", "hip_api_trace"} {
				rows[name] = len(readCSV(t, filepath.Join(out, "out_"+name+".csv")).rows)
			}
			converted := names(t, out)
			report(t, "-f %s on a 64 KiB tmpfs: exit %d; left (all complete): %v; kept spool: %d dispatches, %d HIP calls; convert -f %s,csv: exit %d, %d kernel rows, %d HIP rows, files %v",
				format, res.exit, left, dispatches, api, format, conv.exit, rows["kernel_trace"], rows["hip_api_trace"], converted)
			require.EqualValues(t, dispatches, rows["kernel_trace"])
			require.EqualValues(t, api, rows["hip_api_trace"])
		})
	}
}

// Issue 19, figure 3: SIGKILL of rocprof-go while the app runs. The app
// ends with it, and the run directory it left converts with every record
// the app had published.
func TestHostileKillTheCLI(t *testing.T) {
	hostile(t)
	root := t.TempDir()
	lines, wait := profiled{opts: []string{"--kernel-trace", "-f", "csv"},
		argv: []string{app(t, "fault_progress"), "100", "300"},
		env:  []string{"ROCPROF_GO_SPOOL_ROOT=" + root}}.startWithProgress(t)
	pid, seen := waitProgress(t, lines, 5000)
	// The app's parent is rocprof-go.
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	cliPid, err := strconv.Atoi(strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))[1])
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(cliPid, syscall.SIGKILL))
	killed := time.Now()
	ended := time.Duration(-1)
	for time.Since(killed) < 10*time.Second {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			ended = time.Since(killed)
			break
		}
		time.Sleep(time.Millisecond)
	}
	last := drain(lines, seen)
	res := wait()
	require.GreaterOrEqual(t, ended, time.Duration(0), "the app still ran 10 s after rocprof-go was killed")
	runs, _ := filepath.Glob(filepath.Join(root, "rocprof-go-run-*"))
	require.Len(t, runs, 1, "the killed run's directory is left")
	published, _ := spoolCounts(t, filepath.Join(runs[0], "pass_1"))
	out := t.TempDir()
	conv := measure(t, runTimeout, nil, cli(t), "convert", "-i", runs[0], "-f", "csv", "-d", out, "-q")
	require.Equal(t, 0, conv.exit, conv.stderr)
	kt := readCSV(t, filepath.Join(out, "out_kernel_trace.csv"))
	app := 0
	for _, r := range kt.rows {
		if !strings.HasPrefix(r[kt.col(t, "Kernel_Name")], "__amd_rocclr_") {
			app++
		}
	}
	report(t, "rocprof-go exit %d; the app ended %.0f ms after the kill; the app had reported %d completed dispatches; the spool held %d published; convert: %d kernel rows (%d the app's)",
		res.exit, float64(ended.Microseconds())/1000, last, published, len(kt.rows), app)
	require.Less(t, ended, time.Second)
	require.EqualValues(t, published, len(kt.rows))
	require.GreaterOrEqual(t, app, last)
}

// Issue 19, figure 4: --timeout 5s with a descendant that ignores SIGTERM
// and is orphaned. Before: 46 s.
func TestHostileTimeoutWithOrphan(t *testing.T) {
	hostile(t)
	for _, tc := range []struct{ name, script string }{
		{"orphan", `(trap '' TERM; sleep 120) & exit 0`},
		{"app-running", `(trap '' TERM; sleep 120) & sleep 120`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := profiled{opts: []string{"--kernel-trace", "--timeout", "5s"}, argv: []string{"sh", "-c", tc.script}}.run(t)
			report(t, "%s: exit %d after %.1f s; warning: %q", tc.script, res.exit, res.duration.Seconds(), firstLine(res.stderr, "still running"))
			require.Less(t, res.duration, 15*time.Second)
			require.Contains(t, res.stderr, "(sleep)", "the message names what was still running")
		})
	}
}

// Issue 19, figure 5: 20 runs at once into one output directory.
func TestHostileTwentyConcurrentRuns(t *testing.T) {
	hostile(t)
	const runs, n = 20, 1000
	dir := t.TempDir()
	results := make(chan result, runs)
	start := time.Now()
	for range runs {
		go func() {
			results <- profiled{opts: []string{"--kernel-trace", "-f", "csv"}, argv: []string{app(t, "tiny_kernels"), strconv.Itoa(n)}, dir: dir}.run(t)
		}()
	}
	exits := map[int]int{}
	for range runs {
		exits[(<-results).exit]++
	}
	wall := time.Since(start)
	out := readOutputs(t, dir)
	pids := out.pids("kernel_trace")
	per := map[int]int{}
	for _, pid := range pids {
		per[out.appKernels(t, pid)]++
	}
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	valid := json.Valid(data)
	m := readManifest(t, dir)
	listed := map[string]bool{}
	for _, r := range append(m.Concurrent, *m) {
		requireManifestMatches(t, dir, &r)
		for _, f := range r.Files {
			listed[filepath.Base(f.Path)] = true
		}
	}
	inManifest := 0
	for _, pid := range pids {
		if listed[fmt.Sprintf("%d_kernel_trace.csv", pid)] {
			inManifest++
		}
	}
	report(t, "%d runs of %d dispatches in %.1f s: exits %v; kernel traces %d, dispatches per run %v (count: runs); run.json valid %v, %d runs in it, lists %d of %d kernel traces",
		runs, n, wall.Seconds(), exits, len(pids), per, valid, 1+len(m.Concurrent), inManifest, len(pids))
	require.Equal(t, map[int]int{0: runs}, exits)
	require.Equal(t, map[int]int{n: runs}, per)
	require.True(t, valid)
}

// Issue 19, figure 6: an input file of 1M pmc: lines (14 MB). Before:
// 3.2 GB of memory before the first pass.
func TestHostileHugeInputFile(t *testing.T) {
	hostile(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		lines int
	}{{"1M lines", 1000000}, {"1001 lines", 1001}} {
		in := filepath.Join(dir, strconv.Itoa(tc.lines)+".txt")
		require.NoError(t, os.WriteFile(in, bytes.Repeat([]byte("pmc: SQ_WAVES\n"), tc.lines), 0o644))
		fi, err := os.Stat(in)
		require.NoError(t, err)
		res := measure(t, runTimeout, nil, cli(t), "--virtual-gpu", "-i", in, "-d", filepath.Join(dir, "out"), "--", app(t, "tiny_kernels"), "10")
		report(t, "%s (%d bytes): exit %d in %.0f ms, peak memory %d KiB; app ran: %v; message: %q",
			tc.name, fi.Size(), res.exit, float64(res.wall.Microseconds())/1000, res.maxRSSKiB,
			strings.Contains(res.stdout, "dispatches="), firstLine(res.stderr, "error"))
		require.Equal(t, 1, res.exit)
	}
}

// Issue 19, figure 7: FIFOs named like a spool or run.json, and another
// user holding the output directory's flock: nothing hangs.
func TestHostileFIFOsAndForeignLock(t *testing.T) {
	hostile(t)
	t.Run("fifo-spool", func(t *testing.T) {
		in := t.TempDir()
		sp := spooltest.New(tracing.ProcessInfo{PID: 4242, PPID: 1, Hostname: "h", Argv: []string{"app"}, StartBoottimeNs: 1})
		sp.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 3, TID: 4242, CorrelationID: 1, Start: 10, End: 20})
		_, err := sp.WriteFile(in)
		require.NoError(t, err)
		require.NoError(t, syscall.Mkfifo(filepath.Join(in, "rpg-4343-1-0.spool"), 0o600))
		res := measure(t, time.Minute, nil, cli(t), "convert", "-i", in, "-f", "csv", "-d", t.TempDir())
		report(t, "convert -i DIR with a FIFO named like a spool: exit %d in %.0f ms; %q",
			res.exit, float64(res.wall.Microseconds())/1000, strings.TrimSpace(res.stderr))
		require.Equal(t, 1, res.exit)
		require.Contains(t, res.stderr, "not a regular file")
	})
	t.Run("fifo-run.json", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "run.json"), 0o644))
		res := profiled{opts: []string{"--kernel-trace"}, argv: []string{app(t, "tiny_kernels"), "100"}, dir: dir}.run(t)
		fi, err := os.Lstat(filepath.Join(dir, "run.json"))
		require.NoError(t, err)
		report(t, "run.json a FIFO: exit %d in %.1f s; run.json now regular: %v", res.exit, res.duration.Seconds(), fi.Mode().IsRegular())
		require.Equal(t, 0, res.exit)
	})
	t.Run("foreign-flock", func(t *testing.T) {
		uid, gid := testsys.SecondUser(t)
		dir, err := os.MkdirTemp("", "rel-flock-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		require.NoError(t, os.Chmod(dir, 0o777|os.ModeSticky)) // shared, as /tmp (a 0777 output directory is refused)
		holder := exec.Command("flock", "-x", dir, "sleep", "300")
		holder.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
		require.NoError(t, holder.Start())
		t.Cleanup(func() { _ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); _ = holder.Wait() })
		for i := 0; exec.Command("flock", "-n", dir, "true").Run() == nil; i++ {
			require.Less(t, i, 500, "the other user took the lock")
			time.Sleep(10 * time.Millisecond)
		}
		res := profiled{opts: []string{"--kernel-trace"}, argv: []string{app(t, "tiny_kernels"), "100"}, dir: dir}.run(t)
		m := readManifest(t, dir)
		report(t, "uid %d holds the directory's flock: exit %d in %.1f s; run.json written (%d files); note: %q",
			uid, res.exit, res.duration.Seconds(), len(m.Files), firstLine(res.stderr, "lock"))
		require.Equal(t, 0, res.exit)
	})
}

// Issue 19, figure 8: an OTF2 archive of one process with 130,000 thread
// ids (one HIP call each). Before: more than 400 s. The spool is built
// directly: this machine's pid_max (32768) caps the distinct thread ids a
// real app can have, and only the number of locations matters here.
func TestHostileOTF2ManyThreads(t *testing.T) {
	hostile(t)
	n := benchInt("ROCPROF_GO_BENCH_THREADS", 130000)
	in := t.TempDir()
	sp := spooltest.New(tracing.ProcessInfo{PID: 4242, PPID: 1, Hostname: "h", Argv: []string{"app"}, StartBoottimeNs: 1})
	for i := range n {
		sp.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 3, TID: uint32(100000 + i),
			CorrelationID: uint64(i + 1), Start: uint64(1000 + 10*i), End: uint64(1005 + 10*i)})
	}
	_, err := sp.WriteFile(in)
	require.NoError(t, err)
	out := t.TempDir()
	res := measure(t, 30*time.Minute, nil, cli(t), "convert", "-i", in, "-f", "otf2", "-d", out, "-q")
	require.Equal(t, 0, res.exit, res.stderr)
	evt, _ := filepath.Glob(filepath.Join(out, "out_results", "*.evt"))
	report(t, "%d thread ids: convert -f otf2 exit %d in %.1f s, peak memory %d MiB; %d location event files",
		n, res.exit, res.wall.Seconds(), res.maxRSSKiB>>10, len(evt))
	require.Len(t, evt, n)
}
