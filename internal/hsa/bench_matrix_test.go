package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The dispatch overhead benchmarks run on every runtime of the ROCm matrix
// (docs/rocm-matrix.md): the host's ROCm 5.2 and the Debian roots of 6.1,
// 6.4 and 7.2, each profiled run against a run without the profiler on the
// same runtime, with the same libraries and environment (appEnv).

// benchTimeout bounds one app run, so that a hang in a root fails the
// benchmark with the app's output instead of waiting for go test's timeout.
const benchTimeout = 5 * time.Minute

// hostRuntime is the matrix's host entry: programs run directly.
var hostRuntime = rocmmatrix.Runtime{Name: rocmmatrix.HostName}

// repoRoot is the directory holding go.mod.
func repoRoot(t testing.TB) string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatalf("no go.mod above %s", wd)
	return ""
}

// benchRuntimes is the ROCm matrix, host first. A missing root or app
// directory fails with the make targets that build them.
func benchRuntimes(b *testing.B) []rocmmatrix.Runtime {
	rs, err := rocmmatrix.Ready(repoRoot(b), buildDir(b))
	require.NoError(b, err)
	return rs
}

// shimAppBuilds compile the shim's test apps as mk/shim.mk does for the
// host; "OUT" is the output and "SRC" the source in internal/hsa/testdata.
var shimAppBuilds = map[string][]string{
	"multistream": {"hipcc", "--offload-arch=gfx90a", "-O2", "-o", "OUT", "SRC.hip"},
	"dispatch":    {"gcc", "-O2", "-Wall", "-o", "OUT", "SRC.c", "-lhsa-runtime64"},
}

// shimApp returns one of the shim's test apps (internal/hsa/testdata) built
// for a runtime: make's build/test/shim/<name> for the host; for a root,
// compiled with the root's own compiler and headers into a directory under
// /tmp (which the roots see) that lives as long as the benchmark, since
// `make rocm-testapps` builds testdata/apps, not these.
func shimApp(b *testing.B, rt rocmmatrix.Runtime, name string) string {
	b.Helper()
	if rt.Root == "" {
		return artifact(b, "test/shim/"+name)
	}
	dir, err := os.MkdirTemp("/tmp", "rpg-bench-"+rt.Name+"-")
	require.NoError(b, err)
	b.Cleanup(func() { os.RemoveAll(dir) })
	src, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(b, err)
	out := filepath.Join(dir, name)
	recipe, ok := shimAppBuilds[name]
	require.True(b, ok, "no recipe for %s", name)
	argv := make([]string, len(recipe))
	for i, a := range recipe {
		argv[i] = strings.NewReplacer("OUT", out, "SRC", src).Replace(a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	msg, err := rt.Command(ctx, argv[0], argv[1:]...).CombinedOutput()
	require.NoError(b, err, "ROCm %s: %s: %s", rt.Name, strings.Join(argv, " "), msg)
	return out
}

// measureOn runs prog once on a runtime of the matrix: on the virtual GPU,
// and unless bare with the preload library, the shim and vars. A profiled
// run's spools are counted into recorded before they are removed. The
// app's failure fails the benchmark. A root's wall and CPU times include
// entering it (scripts/rocm-root.sh: ~30 ms, in bare and profiled runs
// alike).
func measureOn(b *testing.B, rt rocmmatrix.Runtime, profiled bool, vars []string, prog string, args ...string) measured {
	b.Helper()
	// Spools on tmpfs, as the launcher puts them.
	spools, err := os.MkdirTemp("/dev/shm", "rpg-bench-")
	require.NoError(b, err)
	defer os.RemoveAll(spools)
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	cmd := rt.Command(ctx, prog, args...)
	cmd.Env = appEnv(b, spools, !profiled, vars...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	require.NoError(b, err, "ROCm %s: %s %v (profiled %v)\nstdout: %s\nstderr: %s",
		rt.Name, prog, args, profiled, out.String(), errb.String())
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	m := measured{
		wall:   wall,
		cpu:    cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		maxRSS: ru.Maxrss * 1024,
		stdout: out.String(),
		stderr: errb.String(),
	}
	if profiled {
		m.recorded = countRecords(b, spools)
	}
	return m
}

// countRecords counts the published records per kind in a run's spools.
func countRecords(b *testing.B, dir string) map[tracing.Kind]uint64 {
	paths, err := tracing.List(dir)
	require.NoError(b, err)
	n := map[tracing.Kind]uint64{}
	for _, p := range paths {
		r, err := tracing.Open(p)
		require.NoError(b, err)
		for r.Next() {
			n[r.Kind()]++
		}
		require.NoError(b, r.Close())
	}
	return n
}

// requireRecorded fails unless every profiled run recorded at least want
// records of kind k: an overhead of a profiler that recorded nothing is no
// overhead figure.
func requireRecorded(b *testing.B, rt rocmmatrix.Runtime, ms []measured, k tracing.Kind, want uint64) {
	b.Helper()
	for _, m := range ms {
		require.GreaterOrEqual(b, m.recorded[k], want,
			"ROCm %s: the profiled run recorded %d %v records, want at least %d", rt.Name, m.recorded[k], k, want)
	}
}
