package reliability

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Two rocprof-go runs writing into one output directory at the same time:
// the default prefix %hostname%/%pid% keeps their files apart and both are
// complete. run.json describes the run that finished last and carries the
// other, which overlapped it, in concurrent_runs: every file is listed.
func TestConcurrentRunsShareAnOutputDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := profiled{opts: traceOpts, argv: []string{app(t, "multistream"), "2", "2"}, dir: dir}
	b := profiled{opts: traceOpts, argv: []string{app(t, "multistream"), "3", "1"}, dir: dir}
	results := make(chan result, 2)
	for _, p := range []profiled{a, b} {
		go func() { results <- p.run(t) }()
	}
	r1, r2 := <-results, <-results
	for _, r := range []result{r1, r2} {
		require.Equal(t, 0, r.exit, "stderr:\n%s", r.stderr)
	}
	want := []int{intField(t, r1.stdout, "dispatches"), intField(t, r2.stdout, "dispatches")}
	out := readOutputs(t, dir)
	pids := out.pids("kernel_trace")
	require.Len(t, pids, 2, "one set of files per run")
	var got []int
	for _, pid := range pids {
		got = append(got, out.appKernels(t, pid))
		require.Len(t, out[pid]["agent_info"].rows, 2, "pid %d agent_info", pid)
	}
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got)
	m := readManifest(t, dir)
	requireManifestMatches(t, dir, m)
	require.Len(t, m.Concurrent, 1, "run.json carries the run that overlapped the last one")
	other := m.Concurrent[0]
	requireManifestMatches(t, dir, &other)
	commands := []string{strings.Join(m.Command[1:], " "), strings.Join(other.Command[1:], " ")}
	slices.Sort(commands)
	require.Equal(t, []string{"2 2", "3 1"}, commands)
	listed := map[string]bool{}
	for _, f := range append(m.Files, other.Files...) {
		listed[filepath.Base(f.Path)] = true
	}
	for _, pid := range pids {
		require.True(t, listed[fmt.Sprintf("%d_kernel_trace.csv", pid)], "run.json lists pid %d's kernel trace", pid)
	}
	report(t, "exits %d,%d; dispatches per run: expected %v, found %v; run.json: valid, lists both runs (%q last with %d files, %q concurrent with %d files)",
		r1.exit, r2.exit, want, got, strings.Join(m.Command[1:], " "), len(m.Files), strings.Join(other.Command[1:], " "), len(other.Files))
}

// The output filesystem fills up while the CLI writes the CSV files: a clear
// error naming the file and ENOSPC, exit status 1, the recorded data kept in
// the run directory (all of it); the file that did not fit is not left
// under its name (it was written under a temporary name, now removed), and
// every file that is there is complete and listed in run.json.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	mnt := testsys.SmallTmpfs(t, "256k")

	res := profiled{opts: []string{"--kernel-trace", "-f", "csv"}, argv: []string{app(t, "tiny_kernels"), "5000"}, dir: mnt}.run(t)
	require.Equal(t, 1, res.exit, "stderr:\n%s", res.stderr)
	require.Contains(t, res.stderr, "no space left on device")
	m := regexp.MustCompile(`the recorded data is kept in (\S+)\)`).FindStringSubmatch(res.stderr)
	require.NotNil(t, m, "the error names where the data was kept:\n%s", res.stderr)
	spoolDir := m[1]
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(spoolDir)) })
	want := intField(t, res.stdout, "dispatches")

	// Nothing recorded is lost: the kept spools hold every dispatch.
	paths, err := tracing.List(spoolDir)
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var kept uint64
	for _, p := range paths {
		r, err := tracing.Open(p)
		require.NoError(t, err)
		for r.Next() {
		}
		st := r.Stats()
		kept += st.Count(tracing.KindKernelDispatch)
		require.Zero(t, st.Torn)
		r.Close()
	}
	require.EqualValues(t, want, kept, "dispatches kept in the spool")

	// The trace that did not fit is not there, half-written or at all;
	// what is there parses whole, and no temporary file is left.
	msg := firstLine(res.stderr, "error")
	failed := regexp.MustCompile(`write (\S+): no space left on device`).FindStringSubmatch(msg)
	require.NotNil(t, failed, "the message names the file: %s", msg)
	_, err = os.Lstat(failed[1])
	require.True(t, os.IsNotExist(err), "%s is left under its final name", failed[1])
	var sizes []string
	rows := 0
	files, _ := filepath.Glob(filepath.Join(mnt, "*", "*"))
	for _, f := range files {
		require.False(t, strings.HasPrefix(filepath.Base(f), "."), "temporary file left: %s", f)
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotEmpty(t, data, "no empty file is left behind: %s", f)
		require.Equal(t, byte('\n'), data[len(data)-1], "%s ends on a complete row", f)
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		require.NoError(t, err, f)
		rows += len(recs) - 1
		sizes = append(sizes, filepath.Base(f)+"="+strconv.Itoa(len(data)))
	}
	_, manifestErr := os.Stat(filepath.Join(mnt, "run.json"))
	if manifestErr == nil {
		requireManifestMatches(t, mnt, readManifest(t, mnt))
	}
	report(t, "exit %d; dispatches: expected %d, kept in the spool %d; complete CSV files left: %v (%d rows); run.json written: %v; message: %q",
		res.exit, want, kept, sizes, rows, manifestErr == nil, msg)
}

// firstLine returns the first line of s containing substr.
func firstLine(s, substr string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return ""
}
