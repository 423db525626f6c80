package rocmlibs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// buildFakeRCCL compiles the stand-in RCCL (librccl.so.1) and an app linked
// against it into dir.
func buildFakeRCCL(t *testing.T, dir string) string {
	src := filepath.Join(testsys.RepoRoot(t), "test", "rocmlibs", "testdata", "fake_rccl")
	lib := filepath.Join(dir, "librccl.so.1")
	// -fPIC without -fno-semantic-interposition: ncclBcast reaches
	// ncclBroadcast through the PLT, as RCCL's own calls do.
	out, err := exec.Command("gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-pthread",
		"-Wl,-soname,librccl.so.1", "-o", lib, filepath.Join(src, "librccl.c")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	app := filepath.Join(dir, "app")
	out, err = exec.Command("gcc", "-O2", "-Wall", "-Werror", "-o", app, filepath.Join(src, "app.c"),
		lib, "-Wl,-rpath,"+dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return app
}

// The interposers record exactly the application's calls to rocprofv3's
// RCCL functions, in order, with their arguments and results passed through:
// not RCCL's calls to its own API (ncclBcast's ncclBroadcast, the init
// thread's ncclGetVersion), not the exports rocprofv3 does not list
// (ncclBcast); and nothing without ROCPROF_RCCL_API_TRACE. Host only, no GPU.
func TestRCCLInterposition(t *testing.T) {
	dir := t.TempDir()
	app := buildFakeRCCL(t, dir)
	preload := testsys.Artifact(t, "lib/librocprof-go-preload.so")
	run := func(trace bool) (string, []tracing.RCCLCall) {
		spools := t.TempDir()
		cmd := exec.Command(app)
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+preload, "ROCPROF_GO_SPOOL_DIR="+spools)
		if trace {
			cmd.Env = append(cmd.Env, "ROCPROF_RCCL_API_TRACE=1")
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), errb.String())
		paths, err := tracing.List(spools)
		require.NoError(t, err)
		var calls []tracing.RCCLCall
		for _, p := range paths {
			r, err := tracing.Open(p)
			require.NoError(t, err)
			for r.Next() {
				if r.Kind() == tracing.KindRCCLAPI {
					c := r.RCCLCall()
					c.APICall.Args = nil
					for i, a := range c.Args {
						c.Args[i] = append([]byte(nil), a...)
					}
					calls = append(calls, c)
				}
			}
			require.NoError(t, r.Close())
		}
		return out.String(), calls
	}

	// The real functions' results reach the app unchanged.
	const want = "version 22707 comm 0x10c1 comms 0x58b3 0x58b4 fake success\n"
	out, calls := run(false)
	require.Equal(t, want, out)
	require.Empty(t, calls, "ROCPROF_RCCL_API_TRACE unset: nothing recorded")

	out, calls = run(true)
	require.Equal(t, want, out)
	var names []string
	for _, c := range calls {
		names = append(names, c.Name())
		require.NotEqual(t, uint32(os.Getpid()), c.TID, "the app's thread, not the test's")
		require.Greater(t, c.EndCorrelationID, c.CorrelationID)
		require.LessOrEqual(t, c.Start, c.End)
	}
	require.Equal(t, []string{"ncclGetVersion", "ncclCommInitRank", "ncclCommInitAll", "ncclGroupStart",
		"ncclGroupEnd", "ncclGetErrorString"}, names)
	for i := 1; i < len(calls); i++ {
		require.Equal(t, calls[0].TID, calls[i].TID, "every call on the app's one thread")
		require.Greater(t, calls[i].CorrelationID, calls[i-1].EndCorrelationID-1, "ids increase on the thread")
	}
	// Arguments as passed: ncclUniqueId by value, ints, pointers.
	initRank := calls[1]
	require.Len(t, initRank.Args, 4)
	id := initRank.Arg("commId")
	require.Len(t, id, 128)
	for i, b := range id {
		require.Equal(t, byte(i), b)
	}
	require.Equal(t, uint64(4), le64(initRank.Arg("nranks")))
	require.Equal(t, uint64(2), le64(initRank.Arg("rank")))
	require.Equal(t, uint64(2), le64(calls[2].Arg("ndev")))
	require.Empty(t, calls[3].Args, "ncclGroupStart has no parameters")
}
