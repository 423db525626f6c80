package teardown

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
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

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

const (
	ranks     = 4
	calls     = 1000000
	crashRank = 2
	// Each rank's HIP API records: hipSetDevice, then the calls.
	perRank = calls + 1
)

// descendants lists the processes below pid (children first).
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// running reports whether pid runs (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// rows counts the data rows of a CSV file (-1: no such file).
func rows(t *testing.T, path string) int {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return -1
	}
	require.NoError(t, err)
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	return n - 1
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// TestTeardownLosesNoRecord: mpirun -np 4 rocprof-go --hip-trace -f csv
// json pftrace; the apps exit (rank 2 by SIGSEGV); every rocprof-go gets
// SIGTERM, then SIGKILL a second later, while it writes its outputs.
func TestTeardownLosesNoRecord(t *testing.T) {
	_, err := exec.LookPath("mpirun")
	require.NoError(t, err, "mpirun is missing: apt-get install openmpi-bin (make deps)")
	cli := testsys.Artifact(t, "rocprof-go")
	app := testsys.Artifact(t, filepath.Join("testdata", "teardown_calls"))
	dir := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"--allow-run-as-root", "--oversubscribe", "--mca", "orte_abort_on_non_zero_status", "0", "-np", strconv.Itoa(ranks),
		cli, "--virtual-gpu", "--hip-trace", "-f", "csv", "json", "pftrace", "-d", dir, "-o", "%rank%_results",
		"--", app, strconv.Itoa(calls), strconv.Itoa(crashRank)}
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()

	// Every rank's app has made its calls ...
	sc := bufio.NewScanner(out)
	seen := 0
	for seen < ranks && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "rank=") {
			seen++
		}
	}
	require.Equal(t, ranks, seen, "the apps did not all report; stderr:\n%s", errb.String())
	go io.Copy(io.Discard, out)
	// ... and exited: then the teardown, at once.
	var clis []int
	for deadline := time.Now().Add(time.Minute); ; {
		apps := 0
		clis = clis[:0]
		for _, p := range descendants(cmd.Process.Pid) {
			switch comm(p) {
			case "teardown_calls":
				if running(p) {
					apps++
				}
			case "rocprof-go":
				clis = append(clis, p)
			}
		}
		if apps == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the apps did not exit")
		time.Sleep(2 * time.Millisecond)
	}
	all := append(descendants(cmd.Process.Pid), cmd.Process.Pid)
	for _, p := range all {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	time.Sleep(time.Second)
	killed := 0
	for _, p := range clis {
		if running(p) {
			killed++
		}
	}
	for _, p := range all {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	stderr := errb.String()
	t.Logf("%d of %d rocprof-go were still running at the SIGKILL", killed, len(clis))
	for _, m := range regexp.MustCompile(`safe in \S+ \(\d+ spools, [0-9.]+ MiB, \d+ ms; fsynced after \d+ ms\)`).FindAllString(stderr, -1) {
		t.Log(m)
	}

	// The ranks whose outputs are all there; the others are recovered.
	complete := map[int]bool{}
	for r := 0; r < ranks; r++ {
		p := filepath.Join(dir, fmt.Sprintf("%d_results", r))
		if exists(p+"_hip_api_trace.csv") && exists(p+"_results.json") && exists(p+"_results.pftrace") {
			complete[r] = true
			require.Equal(t, perRank, rows(t, p+"_hip_api_trace.csv"), "rank %d's outputs", r)
		}
	}
	conv := filepath.Join(t.TempDir(), "conv")
	c := exec.Command(cli, "convert", "-i", dir, "-f", "csv", "-d", conv, "-o", "%rank%_rec")
	var cout, cerr bytes.Buffer
	c.Stdout, c.Stderr = &cout, &cerr
	if len(complete) < ranks {
		require.NoError(t, c.Run(), "convert:\n%s%s\nrun's stderr:\n%s", cout.String(), cerr.String(), stderr)
	} else {
		_ = c.Run()
	}
	recovered := 0
	for r := 0; r < ranks; r++ {
		line := regexp.MustCompile(fmt.Sprintf(`recovered rank %d \(\S+, pid \d+\): (\d+) records[^\n]*`, r)).FindStringSubmatch(cerr.String())
		if complete[r] {
			require.Nil(t, line, "rank %d's outputs are complete: its rescue is removed", r)
			continue
		}
		require.NotNil(t, line, "rank %d: neither its outputs nor recovered; convert:\n%s\nrun's stderr:\n%s", r, cerr.String(), stderr)
		recovered++
		require.Equal(t, perRank, rows(t, filepath.Join(conv, fmt.Sprintf("%d_rec_hip_api_trace.csv", r))), "rank %d's recovered records", r)
		if r == crashRank {
			require.Contains(t, line[0], "its app exited with status 139 (SIGSEGV)")
		}
	}
	t.Logf("RESULT teardown: %d ranks complete, %d recovered by convert, %d records each; rocprof-go killed: %d of %d",
		len(complete), recovered, perRank, killed, len(clis))
	if recovered == 0 {
		return
	}

	// summary finds the recovered ranks too.
	s := exec.Command(cli, "summary", "-i", dir, "--format", "csv")
	var sout, serr bytes.Buffer
	s.Stdout, s.Stderr = &sout, &serr
	require.NoError(t, s.Run(), "summary:\n%s%s", sout.String(), serr.String())
	require.Contains(t, serr.String(), "recovered rank")
	m := regexp.MustCompile(`(?m)^[^\n]*hipGetDevice[^\n]*?,(\d+),`).FindStringSubmatch(sout.String())
	require.NotNil(t, m, "summary:\n%s", sout.String())
	require.Equal(t, strconv.Itoa(ranks*calls), m[1], "hipGetDevice calls in the summary:\n%s", sout.String())
}

// TestKilledWhileAppRunsIsRecovered: a rank's rocprof-go SIGKILLed while
// its app still makes its calls (its spools on the output directory's file
// system, the app killed with it) leaves its run directory in
// OUTDIR/.rocprof-go-unconverted-<uid> with no rescue manifest; `convert -i
// OUTDIR` finds it, names the rank from the spools, and converts exactly
// the records that `convert -i <run directory>` does. Also when the output
// directory is shared and another user made both the hidden directory of
// older versions and this user's own per-user name first: the spools go to
// a directory of this user's beside them (before, the run fell back to
// /dev/shm and not one record was in the output directory).
func TestKilledWhileAppRunsIsRecovered(t *testing.T) {
	t.Run("own output directory", func(t *testing.T) { killedWhileAppRuns(t, t.TempDir()) })
	t.Run("beside another user's hidden directories", func(t *testing.T) {
		uid, gid := testsys.SecondUser(t)
		dir := testsys.SharedDir(t)
		for _, name := range []string{".rocprof-go-unconverted", launch.UnconvertedDirOf(os.Geteuid())} {
			testsys.AsUser(t, uid, gid, nil, "mkdir", "-m", "0777", filepath.Join(dir, name))
		}
		killedWhileAppRuns(t, dir)
	})
}

func killedWhileAppRuns(t *testing.T, dir string) {
	cli := testsys.Artifact(t, "rocprof-go")
	app := testsys.Artifact(t, filepath.Join("testdata", "teardown_calls"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The rank as Open MPI's mpirun gives it (one rank: no mpirun needed).
	cmd := exec.CommandContext(ctx, cli, "--virtual-gpu", "--hip-trace", "-f", "csv", "-d", dir, "-o", "%rank%_results",
		"--", app, strconv.Itoa(4*calls))
	cmd.Env = append(os.Environ(), "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", "ROCPROF_GO_SPOOLS_ON_OUTPUT=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }()

	// The app runs and has written records (its spool holds more than its
	// header chunk) ...
	appPid := 0
	for deadline := time.Now().Add(time.Minute); appPid == 0; time.Sleep(2 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the app did not start; stderr:\n%s", errb.String())
		spools, _ := filepath.Glob(filepath.Join(dir, launch.UnconvertedDirOf(os.Geteuid())+"*", "rocprof-go-run-*", "pass_1", "rpg-*.spool"))
		for _, p := range descendants(cmd.Process.Pid) {
			if comm(p) == "teardown_calls" && running(p) && len(spools) > 0 {
				appPid = p
			}
		}
	}
	// ... and has published HIP calls in it (its spool appears while HIP
	// still initialises; on a loaded machine that takes a while) ...
	for deadline := time.Now().Add(time.Minute); hipCallsIn(t, dir) < 1000; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline) && running(appPid), "the app recorded no HIP calls; stderr:\n%s", errb.String())
	}
	// ... when its rocprof-go is SIGKILLed: the kernel kills the app too.
	require.True(t, running(appPid), "the app ended before rocprof-go was killed; stderr:\n%s", errb.String())
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); running(appPid); time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the app outlived its rocprof-go")
	}
	runs, _ := filepath.Glob(filepath.Join(dir, launch.UnconvertedDirOf(os.Geteuid())+"*", "rocprof-go-run-*"))
	require.Len(t, runs, 1, "the killed run's directory")
	manifests, _ := filepath.Glob(filepath.Join(dir, launch.UnconvertedDirOf(os.Geteuid())+"*", "*", "manifest.json"))
	require.Empty(t, manifests, "no rescue: the app was still running")

	convertCSV := func(in, out string) (string, error) {
		c := exec.Command(cli, "convert", "-i", in, "-f", "csv", "-d", out, "-o", "rec")
		var cerr bytes.Buffer
		c.Stdout, c.Stderr = io.Discard, &cerr
		err := c.Run()
		return cerr.String(), err
	}
	conv := filepath.Join(t.TempDir(), "conv")
	stderr, err := convertCSV(dir, conv)
	require.NoError(t, err, "convert -i OUTDIR:\n%s", stderr)
	line := regexp.MustCompile(`recovered rank 1 \(\S+, pid (\d+)\): (\d+) records \(its rocprof-go was killed before its app ended: no exit status known, from [^)]*rocprof-go-run-[^)]*\); its app was pid (\d+)`).FindStringSubmatch(stderr)
	require.NotNil(t, line, "convert -i OUTDIR:\n%s", stderr)
	require.Equal(t, strconv.Itoa(cmd.Process.Pid), line[1], "rocprof-go's pid")
	require.Equal(t, strconv.Itoa(appPid), line[3], "the app's pid, from its spool")
	n, _ := strconv.Atoi(line[2])
	got := rows(t, filepath.Join(conv, "rec_hip_api_trace.csv"))
	// The count said is every record of the spools (the HIP calls and
	// the few of the run's other kinds).
	require.GreaterOrEqual(t, n, got, "the records said")
	require.Greater(t, got, 1, "records made before the kill")
	require.Less(t, got, 4*calls+1, "the app was killed before its last call")

	// Exactly what the run directory itself converts to.
	direct := filepath.Join(t.TempDir(), "direct")
	stderr, err = convertCSV(runs[0], direct)
	require.NoError(t, err, "convert -i %s:\n%s", runs[0], stderr)
	require.Equal(t, rows(t, filepath.Join(direct, "rec_hip_api_trace.csv")), got)
	t.Logf("RESULT killed while the app ran: %d of %d records recovered from %s", got, 4*calls+1, filepath.Base(runs[0]))
}

// hipCallsIn counts the HIP calls published so far in the spools of the
// run directories under dir's .rocprof-go-unconverted-<uid> (read while the app
// still writes them).
func hipCallsIn(t *testing.T, dir string) int {
	spools, _ := filepath.Glob(filepath.Join(dir, launch.UnconvertedDirOf(os.Geteuid())+"*", "rocprof-go-run-*", "pass_1", "rpg-*.spool"))
	n := 0
	for _, p := range spools {
		r, err := tracing.Open(p)
		if err != nil {
			continue // not yet whole: its header is still being written
		}
		for r.Next() {
			if r.Kind() == tracing.KindHIPAPI {
				n++
			}
		}
		require.NoError(t, r.Close())
	}
	return n
}
