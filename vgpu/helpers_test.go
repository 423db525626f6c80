package vgpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"

	"github.com/stretchr/testify/require"
)

// repoRoot is the module root: the parent of this package's directory.
func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Dir(filepath.Dir(file))
}

// buildDir is where `make build` put the native artefacts: ROCPROF_GO_BUILD
// (exported by the Makefile) or <repo>/build.
func buildDir(t testing.TB) string {
	if d := os.Getenv("ROCPROF_GO_BUILD"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(t), "build")
}

// artefact returns the path of a built file and fails (never skips) when it
// is missing: `make test` builds every prerequisite first.
func artefact(t testing.TB, rel string) string {
	p := filepath.Join(buildDir(t), rel)
	_, err := os.Stat(p)
	require.NoErrorf(t, err, "%s is missing: run `make build testapps` (or `make test`)", p)
	return p
}

// sharedDir is the shared reference folder beside the checkout, with
// symlinks resolved: the runtimes' roots see it through a bind mount of
// its real path.
func sharedDir(t testing.TB) string {
	d, err := filepath.EvalSymlinks(filepath.Join(repoRoot(t), "..", "shared"))
	require.NoErrorf(t, err, "the shared folder must sit beside the checkout")
	return d
}

type result struct {
	code           int // exit code, or 128+signal like a shell
	stdout, stderr string
}

var (
	versionsOnce sync.Once
	versionsLog  string
)

// runtimes is the ROCm matrix: the host's ROCm 5.2 and the roots of
// configs/rocm-matrix.tsv. A runtime that is not built fails the test
// (`make test` builds them); their package versions go to the test log.
func runtimes(t testing.TB) []rocmmatrix.Runtime {
	t.Helper()
	rs, err := rocmmatrix.Runtimes(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	for _, r := range rs {
		require.NoError(t, r.Check())
	}
	versionsOnce.Do(func() {
		var b strings.Builder
		for _, r := range rs {
			v, err := r.Versions()
			fmt.Fprintf(&b, "ROCm %s:\n%s", r.Name, v)
			if err != nil {
				fmt.Fprintf(&b, "(versions: %v)\n", err)
			}
		}
		versionsLog = b.String()
	})
	t.Log("the ROCm matrix:\n" + versionsLog)
	return rs
}

// host is the matrix's host runtime (ROCm 5.2, no root).
func host(t testing.TB) rocmmatrix.Runtime {
	rs, err := rocmmatrix.Runtimes(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	return rs[0]
}

// run starts a program on the virtual GPU under the host's ROCm.
func run(t testing.TB, timeout time.Duration, env []string, prog string, args ...string) result {
	t.Helper()
	return runOn(t, host(t), timeout, env, prog, args...)
}

// runOn starts a program on the virtual GPU under one runtime of the
// matrix, with extra environment variables, and returns its exit code and
// output. It runs in a temporary directory so crash dumps never land in
// the tree.
func runOn(t testing.TB, rt rocmmatrix.Runtime, timeout time.Duration, env []string, prog string, args ...string) result {
	t.Helper()
	lib := artefact(t, "vgpu/librocprof-go-vgpu.so")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := rt.Command(ctx, prog, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib)
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "ROCPROF_VGPU_") || strings.HasPrefix(e, "HSA_TOOLS_LIB=") {
			cmd.Env = append(cmd.Env, strings.SplitN(e, "=", 2)[0]+"=")
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoErrorf(t, ctx.Err(), "ROCm %s: %s %v hung (over %v)\nstdout: %s\nstderr: %s", rt.Name, prog, args, timeout, out.String(), errb.String())
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		} else {
			r.code = ws.ExitStatus()
		}
	} else {
		require.NoError(t, err)
	}
	return r
}
