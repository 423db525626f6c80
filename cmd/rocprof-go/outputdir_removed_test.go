package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// The output directory removed while the outputs are written into it (a
// cleanup job, the user's rm -rf): the run fails naming the directory as
// given and saying it was removed, keeps the spools and says how to convert
// them, and converting them writes the outputs. Before, the error named a
// path below /proc/self/fd or a rename's "no such file or directory", and
// CSV files renamed into the removed directory were reported written.
func TestOutputDirRemovedWhileOutputsAreWritten(t *testing.T) {
	app := sampleApp(t, "callrate")
	spools := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(cliBinary, "--virtual-gpu", "--hip-trace", "-f", "rocpd", "-d", out, "--", app, "1")
	cmd.Env = append(os.Environ(), builtLibs(t), launch.SpoolRootEnv+"="+spools)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The first output file under its temporary name: the writing has
	// begun (a million records take a while): remove the directory.
	removed := false
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-time.After(time.Millisecond):
		}
		if removed {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(out, "*", ".rocprof-go-tmp-*")); len(m) > 0 {
			require.NoError(t, os.RemoveAll(out))
			removed = true
		}
	}
	require.True(t, removed, "the outputs were written before the test saw them begin:\n%s", stderr.String())
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	require.Equal(t, 1, ee.ExitCode(), stderr.String())
	msg := stderr.String()
	require.Contains(t, msg, "the output directory "+out+" was removed (or moved away) by another process while the outputs were written into it")
	require.NotContains(t, msg, "(deleted)")
	require.NotContains(t, msg, "rocprof-go: wrote")
	kept, err := filepath.Glob(filepath.Join(spools, "rocprof-go-run-*", "pass_1"))
	require.NoError(t, err)
	require.Len(t, kept, 1)
	require.Contains(t, msg, "the recorded data is kept in "+kept[0])
	require.Contains(t, msg, "`rocprof-go convert -i "+kept[0]+" -f rocpd -d "+out+"` writes the outputs from it")
	m, err := rocprof.LoadManifest(out)
	require.NoError(t, err, "run.json is written in the directory created again")
	require.Contains(t, m.Error, "was removed")

	// The hint works: every record is there.
	r := runCLI(t, nil, "convert", "-i", kept[0], "-f", "csv", "-d", out)
	require.Equal(t, 0, r.code, r.stderr)
	var files []string
	require.NoError(t, filepath.Walk(out, func(p string, _ os.FileInfo, err error) error {
		if strings.HasSuffix(p, "_hip_api_trace.csv") {
			files = append(files, p)
		}
		return err
	}))
	require.Len(t, files, 1, r.stderr)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.GreaterOrEqual(t, strings.Count(string(b), "\n")-1, 1000000)
}

// Removed while the app runs: the outputs are written into the directory
// created again, and the run says it was removed. Under a launcher the
// spools are in the output directory and go with it: the error says the
// records are lost, never that they are kept where nothing is left.
func TestOutputDirRemovedWhileTheAppRuns(t *testing.T) {
	app := sampleApp(t, "multistream")
	out := filepath.Join(t.TempDir(), "out")
	env := []string{builtLibs(t), launch.SpoolRootEnv + "=" + t.TempDir()}
	r := runCLI(t, env, "--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", out, "--", "sh", "-c", app+" 1 1 && rm -rf "+out)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "rocprof-go: warning: the output directory "+out+" was removed (or moved away) while the app ran: it is created again for the outputs\n")
	files, _ := filepath.Glob(filepath.Join(out, "*", "*_kernel_trace.csv"))
	require.Len(t, files, 1, r.stderr)

	out = filepath.Join(t.TempDir(), "out")
	r = runCLI(t, []string{builtLibs(t), "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=1"},
		"--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", out, "--", "sh", "-c", app+" 1 1 && rm -rf "+out)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "was removed too: those records are lost")
	require.NotContains(t, r.stderr, "the recorded data is kept in")
}
