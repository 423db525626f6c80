package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// `rocprof-go --summary ... | head -1` with the reader gone before the
// summary is printed (issue 31): rocprof-go is not killed by SIGPIPE; it
// writes every output file and run.json, exits with the app's status and
// says on stderr that the summary was dropped. Before: exit 141, no word,
// the database not written and the previous run.json left.
func TestClosedStdoutDoesNotLoseOutputs(t *testing.T) {
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "tiny_kernels"))
	require.NoError(t, err)
	out := t.TempDir()
	// A stale run.json the run must replace.
	require.NoError(t, os.WriteFile(filepath.Join(out, "run.json"), []byte(`{"stale": true}`), 0o644))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close()) // the reader is gone: every write to w is EPIPE
	// The app's own output goes elsewhere: only rocprof-go's stdout is closed.
	cmd := exec.Command(cliBinary, "--virtual-gpu", "--kernel-trace", "--summary", "-f", "csv", "rocpd",
		"-d", out, "-o", "run", "--", "sh", "-c", `exec "$0" 50 >/dev/null`, app)
	cmd.Env = append(os.Environ(), builtLibs(t))
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	require.NoError(t, w.Close())
	if ee, ok := err.(*exec.ExitError); ok {
		ws := ee.Sys().(syscall.WaitStatus)
		require.False(t, ws.Signaled(), "killed by %v; stderr: %s", ws.Signal(), stderr.String())
		t.Fatalf("exit %d: %s", ee.ExitCode(), stderr.String())
	}
	require.NoError(t, err)
	require.Contains(t, stderr.String(), "rocprof-go: note: standard output was closed (broken pipe)")
	names, _ := kernelNames(t, filepath.Join(out, "run_kernel_trace.csv"))
	require.Equal(t, 50, names["tiny(int*)"])
	require.FileExists(t, filepath.Join(out, "run_results.db"))
	m, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	require.Equal(t, 0, m.ExitStatus)
	var listed []string
	for _, f := range m.Files {
		listed = append(listed, filepath.Base(f.Path))
	}
	require.Contains(t, listed, "run_results.db")
	require.Contains(t, listed, "run_kernel_trace.csv")
}

// `rocprof-go -o stdout ... | head -1` with the reader gone: the data that
// was to go to standard output did not reach anyone, so the run fails
// (before: exit 0, the records gone) and keeps the recorded data with the
// command that writes it out.
func TestClosedStdoutFailsStreamedOutputs(t *testing.T) {
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "tiny_kernels"))
	require.NoError(t, err)
	out := t.TempDir()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	spools := t.TempDir()
	cmd := exec.Command(cliBinary, "--virtual-gpu", "--kernel-trace", "-f", "csv",
		"-d", out, "-o", "stdout", "--", "sh", "-c", `exec "$0" 20 >/dev/null`, app)
	cmd.Env = append(os.Environ(), builtLibs(t), "ROCPROF_GO_SPOOL_ROOT="+spools)
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	require.NoError(t, w.Close())
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	ws := ee.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "killed by %v; stderr: %s", ws.Signal(), stderr.String())
	require.NotZero(t, ee.ExitCode())
	require.Contains(t, stderr.String(), "standard output was closed by its reader")
	require.Contains(t, stderr.String(), "rocprof-go convert -i ")
	// The kept spool holds the 20 dispatches: converting it writes them.
	kept, err := filepath.Glob(filepath.Join(spools, "rocprof-go-run-*", "pass_1"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "stderr: %s", stderr.String())
	conv := t.TempDir()
	c := exec.Command(cliBinary, "convert", "-i", kept[0], "-f", "csv", "-d", conv, "-o", "run")
	outb, err := c.CombinedOutput()
	require.NoError(t, err, "%s", outb)
	names, _ := kernelNames(t, filepath.Join(conv, "run_kernel_trace.csv"))
	require.Equal(t, 20, names["tiny(int*)"])
}
