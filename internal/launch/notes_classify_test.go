package launch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A program started without the profiler is lost only if it could have
// recorded: an ELF that links no GPU runtime (a wrapper's readlink or
// unshare) is listed but not lost; a HIP app, a script (its interpreter may
// load anything) and a path the CLI cannot resolve are lost.
func TestExecsWithoutTheProfilerAreLostOnlyIfTheyCouldRecord(t *testing.T) {
	script := filepath.Join(t.TempDir(), "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec ./app\n"), 0o755))
	hipApp, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", "multistream"))
	require.NoError(t, err)
	if b := os.Getenv("ROCPROF_GO_BUILD"); b != "" {
		hipApp = filepath.Join(b, "testdata", "multistream")
	}
	_, err = os.Stat(hipApp)
	require.NoError(t, err, "%s is missing: run `make test` (it builds the sample apps)", hipApp)
	cases := []struct {
		path string
		lost bool
	}{
		{"/usr/bin/readlink", false},
		{"/usr/bin/unshare", false},
		{hipApp, true},
		{script, true},
		{"app", true},                     // relative: resolved in a directory the CLI does not know
		{"/nonexistent/rocprof-go", true}, // gone: cannot tell
	}
	for _, c := range cases {
		ps := []UnprofiledProcess{{PID: 7, Command: c.path, Cause: "profiler_removed", Reason: "removed"}}
		classifyExecs(ps)
		require.Equal(t, c.lost, ps[0].Lost(), "%s: %+v", c.path, ps[0])
		if !c.lost {
			require.Equal(t, CauseNoGPURuntime, ps[0].Cause)
			require.Contains(t, ps[0].Reason, "links no GPU runtime")
		}
	}
	// A spool that could not be created is always lost.
	ps := []UnprofiledProcess{{PID: 8, Command: "/usr/bin/readlink", Cause: "spool_not_created"}}
	classifyExecs(ps)
	require.True(t, ps[0].Lost())
}
