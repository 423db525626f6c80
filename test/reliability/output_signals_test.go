package reliability

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// childPIDs lists the direct children of pid (from /proc).
func childPIDs(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// hasTemp reports whether an output file is being written under dir.
func hasTemp(dir string) bool {
	found := false
	_ = filepath.Walk(dir, func(path string, _ os.FileInfo, _ error) error {
		found = found || atomicfile.IsTemp(path)
		return nil
	})
	return found
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{mu: make(chan struct{}, 1)} }
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.String()
}

// TestSignalsAfterTheAppExited: SIGTERM after the app exited, while
// rocprof-go writes a large JSON and ROCpd output (issue 31). Before: the
// first signal killed rocprof-go mid-output — no run.json, a hidden
// temporary file in the output directory, the spools left in the spool
// root with no word. Now the first signal is noted and the outputs are
// finished; a second stops them cleanly: the file being written is
// removed, run.json lists exactly the files on disk and names the kept run
// directory, which `rocprof-go convert` turns into the outputs.
func TestSignalsAfterTheAppExited(t *testing.T) {
	for _, signals := range []int{1, 2} {
		t.Run(strconv.Itoa(signals), func(t *testing.T) {
			spoolRoot := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			p := profiled{opts: []string{"--kernel-trace", "--hip-trace", "-f", "json", "rocpd"},
				argv: []string{app(t, "tiny_kernels"), "100000"}, env: []string{"ROCPROF_GO_SPOOL_ROOT=" + spoolRoot}}
			cmd, dir := p.command(ctx, t)
			stderr := newSyncBuffer()
			cmd.Stderr = stderr
			require.NoError(t, cmd.Start())
			cliPID := cmd.Process.Pid
			// Wait for the app to start, then to exit: the CLI writes now.
			var appPID int
			for appPID == 0 {
				for _, c := range childPIDs(cliPID) { // the profiled app, not one of the CLI's probes
					if b, _ := os.ReadFile("/proc/" + strconv.Itoa(c) + "/environ"); bytes.Contains(b, []byte("ROCPROF_GO_SPOOL_DIR=")) {
						appPID = c
					}
				}
				require.NoError(t, ctx.Err())
				time.Sleep(time.Millisecond)
			}
			for syscall.Kill(appPID, 0) == nil {
				if b, err := os.ReadFile("/proc/" + strconv.Itoa(appPID) + "/stat"); err == nil && strings.Contains(string(b), ") Z ") {
					break
				}
				time.Sleep(time.Millisecond)
			}
			// ... and for an output file being written: rocprof-go is in
			// its output phase.
			for !hasTemp(dir) {
				require.NoError(t, ctx.Err())
				time.Sleep(time.Millisecond)
			}
			require.NoError(t, syscall.Kill(cliPID, syscall.SIGTERM))
			if signals == 2 {
				for !strings.Contains(stderr.String(), "finishing the outputs") {
					require.NoError(t, ctx.Err())
					require.NoError(t, syscall.Kill(cliPID, 0), "rocprof-go ended on the first signal: %s", stderr.String())
					if b, err := os.ReadFile("/proc/" + strconv.Itoa(cliPID) + "/stat"); err == nil {
						require.NotContains(t, string(b), ") Z ", "rocprof-go ended on the first signal: %s", stderr.String())
					}
					time.Sleep(time.Millisecond)
				}
				require.NoError(t, syscall.Kill(cliPID, syscall.SIGTERM))
			}
			err := cmd.Wait()
			exit := exitCode(t, err)
			m := readManifest(t, dir) // run.json is there and valid
			requireManifestMatches(t, dir, m)
			var temps []string
			_ = filepath.Walk(dir, func(path string, _ os.FileInfo, _ error) error {
				if atomicfile.IsTemp(path) {
					temps = append(temps, path)
				}
				return nil
			})
			require.Empty(t, temps, "temporary files left")
			require.Contains(t, stderr.String(), "received SIGTERM after the app exited")
			kept, _ := filepath.Glob(filepath.Join(spoolRoot, "rocprof-go-run-*"))
			if signals == 1 {
				require.Equal(t, 0, exit, stderr.String())
				require.Empty(t, kept, "the outputs are complete: the run directory is removed")
				require.Equal(t, int64(100000), m.DomainRecords["KERNEL_DISPATCH"])
				require.Len(t, m.Files, 2, "%+v", m.Files)
				t.Logf("RESULT SIGTERM after the app exited: outputs finished, %d files, exit %d", len(m.Files), exit)
				return
			}
			require.NotEqual(t, 0, exit)
			require.Len(t, kept, 1, "the recorded data is kept")
			require.Contains(t, m.Error, kept[0])
			require.Contains(t, m.Error, "stopped by SIGTERM")
			require.Contains(t, m.Error, "rocprof-go convert -i")
			out := t.TempDir()
			conv, err := exec.Command(cli(t), "convert", "-i", kept[0], "-f", "csv", "-d", out).CombinedOutput()
			require.NoError(t, err, "%s", conv)
			rows := 0
			_ = filepath.Walk(out, func(path string, _ os.FileInfo, _ error) error {
				if strings.HasSuffix(path, "kernel_trace.csv") {
					rows += len(readCSV(t, path).rows)
				}
				return nil
			})
			require.Equal(t, 100000, rows, "converted from the kept directory")
			t.Logf("RESULT two SIGTERMs after the app exited: exit %d, %d complete files listed, none temporary, %s kept and converted (%d dispatches)", exit, len(m.Files), kept[0], rows)
			_ = os.RemoveAll(kept[0])
		})
	}
}
