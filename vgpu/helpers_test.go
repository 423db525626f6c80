package vgpu

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

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

type result struct {
	code           int // exit code, or 128+signal like a shell
	stdout, stderr string
}

// run starts a program on the virtual GPU with extra environment variables
// and returns its exit code and output. It runs in a temporary directory so
// crash dumps never land in the tree.
func run(t testing.TB, timeout time.Duration, env []string, prog string, args ...string) result {
	t.Helper()
	lib := artefact(t, "vgpu/librocprof-go-vgpu.so")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
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
	require.NoErrorf(t, ctx.Err(), "%s %v hung (over %v)\nstdout: %s\nstderr: %s", prog, args, timeout, out.String(), errb.String())
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
