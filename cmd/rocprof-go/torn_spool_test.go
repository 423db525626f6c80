package main

import (
	"bytes"
	"encoding"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// mapped reports whether process pid maps path.
func mapped(pid int, path string) bool {
	b, err := os.ReadFile("/proc/" + fmt.Sprint(pid) + "/maps")
	return err == nil && bytes.Contains(b, []byte(path))
}

// A spool truncated while convert reads it (a planted spool's owner cuts
// it short, again and again) does not crash convert: the spool is named
// as cut short, its records past the cut counted lost, and convert fails.
// Before, convert died of the fault (Go's "unexpected fault address",
// exit 2) in most rounds.
func TestConvertSurvivesASpoolTruncatedWhileRead(t *testing.T) {
	dir := t.TempDir()
	b := spooltest.New(outputtest.Info(4242))
	outputtest.Emit(4242, 100000, func(r encoding.BinaryAppender) { b.Add(r) })
	path, err := b.WriteFile(dir)
	require.NoError(t, err)
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	const rounds = 10
	torn := 0
	for i := range rounds {
		require.NoError(t, os.WriteFile(path, whole, 0o600))
		cmd := exec.Command(cliBinary, "convert", "-i", path, "-f", "csv", "-d", t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		// Cut it short once convert has it mapped, past its first chunks.
		deadline := time.Now().Add(30 * time.Second)
		for !mapped(cmd.Process.Pid, path) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Microsecond)
		}
		time.Sleep(time.Duration(i) * time.Millisecond)
		require.NoError(t, os.Truncate(path, 4*tracing.ChunkSize))
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		s := stderr.String()
		require.NotContains(t, s, "unexpected fault address", "round %d", i)
		require.NotContains(t, s, "fatal error", "round %d", i)
		require.NotEqual(t, 2, code, "round %d: %s", i, s)
		if strings.Contains(s, "was cut short (truncated by its owner or another process) while it was read") {
			torn++
			if torn == 1 {
				t.Logf("round %d: exit %d:\n%s", i, code, s)
			}
			require.Error(t, err)
			require.Equal(t, 1, code, "round %d: %s", i, s)
			require.Contains(t, s, "rocprof-go: error: spool "+path+" was cut short")
			require.Contains(t, s, "its records from byte ")
		}
	}
	t.Logf("%d of %d rounds cut the spool while convert read it", torn, rounds)
	require.GreaterOrEqual(t, torn, rounds/2, "the truncation should mostly land while convert reads")
}
