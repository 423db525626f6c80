package reliability

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two runs started with one -o (no %pid%) and one -d at the same time
// wrote the same file names, and the one that ended last replaced the
// other's files. Now the second is refused before its app starts, naming
// the running one and the fix (%pid% in -o); the first is untouched. A run
// after the first ended writes its outputs as before (running again into
// the same names replaces one's own results, as with rocprofv3).
func TestConcurrentRunsWithOneOutputPrefixAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := []string{"--kernel-trace", "-f", "csv", "-o", "out"}
	first := profiled{opts: opts, argv: []string{app(t, "fault_progress"), "10", "120"}, dir: dir}
	lines, wait := first.startWithProgress(t)
	pid, _ := waitProgress(t, lines, 20)
	cliPid := parentOf(t, pid)

	second := profiled{opts: opts, argv: []string{app(t, "tiny_kernels"), "5"}, dir: dir}.run(t)
	require.Equal(t, 1, second.exit, "stderr:\n%s", second.stderr)
	require.Contains(t, second.stderr, "output clash: "+filepath.Join(dir, "out")+"* are the output files of another rocprof-go run still running (pid "+strconv.Itoa(cliPid))
	require.Contains(t, second.stderr, "put %pid% in -o")
	require.NoFileExists(t, filepath.Join(dir, "out_kernel_trace.csv"), "the second run wrote nothing")

	require.NoError(t, syscall.Kill(cliPid, syscall.SIGINT))
	last := drain(lines, 0)
	res := wait()
	require.Equal(t, 130, res.exit, "stderr:\n%s", res.stderr)
	kept := outputs{pid: {"kernel_trace": readCSV(t, filepath.Join(dir, "out_kernel_trace.csv"))}}.appKernels(t, pid)
	require.GreaterOrEqual(t, kept, last, "the first run's dispatches")

	third := profiled{opts: opts, argv: []string{app(t, "tiny_kernels"), "5"}, dir: dir}.run(t)
	require.Equal(t, 0, third.exit, "a run after the first ended: stderr:\n%s", third.stderr)
	_, err := os.Stat(filepath.Join(dir, "out_kernel_trace.csv"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, ".rocprof-go-claims"))
	require.ErrorIs(t, err, os.ErrNotExist, "a run that ended leaves no claim behind")
	report(t, "second run refused (exit %d) while the first (pid %d) ran; first: exit %d, %d dispatches kept; a run after it: exit %d",
		second.exit, cliPid, res.exit, kept, third.exit)
}
