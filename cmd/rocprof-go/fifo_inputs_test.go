package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A FIFO given where rocprof-go reads a file (-i, -E, --config, a batch
// file, a trace CSV of a run summary reads) is refused at once, naming the
// file and what it is; before, the open (or read) blocked forever waiting
// for a writer that never came.
func TestFIFOInputsAreRefusedNotWaitedOn(t *testing.T) {
	dir := t.TempDir()
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		return p
	}
	// A run whose run.json lists a trace CSV and a database that are FIFOs.
	run := filepath.Join(dir, "run")
	require.NoError(t, os.Mkdir(run, 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(run, "out_kernel_trace.csv"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(run, "run.json"), []byte(`{"exit_status": 0, "passes": [{"dir": ".", "exit_status": 0}],
		"files": [{"path": "out_kernel_trace.csv", "format": "csv"}]}`), 0o644))
	db := filepath.Join(dir, "db")
	require.NoError(t, os.Mkdir(db, 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(db, "out_results.db"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(db, "run.json"), []byte(`{"exit_status": 0, "passes": [{"dir": ".", "exit_status": 0}],
		"files": [{"path": "out_results.db", "format": "rocpd"}]}`), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		file string
	}{
		{"-i", []string{"--virtual-gpu", "-i", fifo("input.txt"), "--", "true"}, "input.txt"},
		{"-E", []string{"--virtual-gpu", "--pmc", "SQ_WAVES", "-E", fifo("extra.yaml"), "--", "true"}, "extra.yaml"},
		{"--config", []string{"--virtual-gpu", "--config", fifo("config.yaml"), "--kernel-trace", "--", "true"}, "config.yaml"},
		{"batch", []string{"batch", fifo("jobs.yaml")}, "jobs.yaml"},
		{"summary of a run.json listing a CSV", []string{"summary", "-i", run}, "out_kernel_trace.csv"},
		{"summary of a run.json listing a database", []string{"summary", "-i", db}, "out_results.db"},
		{"compare", []string{"compare", filepath.Join(db, "out_results.db"), filepath.Join(run, "out_kernel_trace.csv")}, "out_results.db"},
		{"summary of a CSV", []string{"summary", "-i", filepath.Join(run, "out_kernel_trace.csv")}, "out_kernel_trace.csv"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, cliBinary, tc.args...)
		cmd.Dir = t.TempDir()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		waited := ctx.Err()
		cancel()
		require.NoError(t, waited, "%s: rocprof-go waited on the FIFO (stderr: %s)", tc.name, stderr.String())
		require.Error(t, err, tc.name)
		require.Contains(t, stderr.String(), tc.file, tc.name)
		require.Contains(t, stderr.String(), "is a FIFO (named pipe), not a regular file", tc.name)
		t.Logf("%s: refused in %s: %s", tc.name, time.Since(start).Round(time.Millisecond), bytes.TrimSpace(stderr.Bytes()))
	}
}
