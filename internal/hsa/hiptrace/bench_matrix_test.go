package hiptrace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The HIP-call benchmark runs on every runtime of the ROCm matrix
// (docs/rocm-matrix.md): the host's ROCm 5.2 and the Debian roots of 6.1,
// 6.4 and 7.2, with each runtime's own build of the app and its profiled
// runs against runs without the profiler on the same runtime.

// benchRuntimes is the ROCm matrix, host first. A missing root or app
// directory fails with the make targets that build them.
func benchRuntimes(b *testing.B) []rocmmatrix.Runtime {
	_, file, _, ok := runtime.Caller(0)
	require.True(b, ok)
	rs, err := rocmmatrix.Ready(filepath.Join(filepath.Dir(file), "..", "..", ".."), buildDir(b))
	require.NoError(b, err)
	return rs
}

// execOn is execIn on a runtime of the matrix: r.app is a path under the
// runtime's app directory, and the environment is execIn's (the virtual
// GPU first in LD_PRELOAD, then the preload library). It returns the app's
// stdout and the records per kind its spools hold.
func (r run) execOn(b *testing.B, rt rocmmatrix.Runtime, spools string) (string, map[tracing.Kind]uint64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prog := filepath.Join(rt.Apps, r.app)
	cmd := rt.Command(ctx, prog, r.args...)
	preload := artifact(b, "vgpu/librocprof-go-vgpu.so")
	if r.preload {
		preload += ":" + artifact(b, "lib/librocprof-go-preload.so")
	}
	env := append(os.Environ(), "LD_PRELOAD="+preload, "ROCPROF_GO_SPOOL_DIR="+spools)
	if r.shim {
		env = append(env, "HSA_TOOLS_LIB="+artifact(b, "lib/librocprof-go-shim.so"))
	}
	cmd.Env = append(env, r.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(b, cmd.Run(), "ROCm %s: %s %v: %s", rt.Name, prog, r.args, errb.String())
	paths, err := tracing.List(spools)
	require.NoError(b, err)
	n := map[tracing.Kind]uint64{}
	for _, p := range paths {
		sp, err := tracing.Open(p)
		require.NoError(b, err)
		for sp.Next() {
			n[sp.Kind()]++
		}
		require.NoError(b, sp.Close())
	}
	return out.String(), n
}
