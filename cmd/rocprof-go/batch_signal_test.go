package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SIGTERM to `rocprof-go batch` ends the running job (its app gets the
// signal, its outputs are written) and starts no further job.
func TestBatchStopsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	jobs := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(jobs, []byte(`batch:
  - name: long
    command: [sh, -c, "touch `+ready+`; exec sleep 30"]
    options: [--hip-runtime-trace]
  - name: second
    command: ["true"]
  - name: third
    command: ["true"]
`), 0o644))
	cmd := exec.Command(cliBinary, "batch", "-d", filepath.Join(dir, "out"), jobs)
	cmd.Env = append(os.Environ(), builtLibs(t))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out.String())
	require.Equal(t, 143, ee.ExitCode(), "%s", out.String())
	require.Less(t, time.Since(start), 5*time.Second)
	require.Contains(t, out.String(), "stopped by terminated: 2 of 3 jobs not started")
	require.FileExists(t, filepath.Join(dir, "out", "long", "run.json"), "the running job's outputs are written")
	require.NoDirExists(t, filepath.Join(dir, "out", "second"))
}
