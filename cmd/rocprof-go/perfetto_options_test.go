package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// --perfetto-buffer-size caps the Perfetto trace (issue 35): a run whose
// trace does not fit writes it up to the cap (discard: the first records,
// ring_buffer: the last), fails, and says how many records each process
// lost from it; run.json lists them; CSV holds every record. Without the
// option the trace has no cap.
func TestPerfettoBufferSizeCapsTheTrace(t *testing.T) {
	app := sampleApp(t, "multistream")
	env := []string{builtLibs(t)}
	base := []string{"--virtual-gpu", "--hip-trace", "--kernel-trace", "-f", "pftrace", "csv"}

	full := t.TempDir()
	r := runCLI(t, env, append(append([]string{}, base...), "-d", full, "--", app, "2", "3")...)
	require.Equal(t, 0, r.code, r.stderr)
	whole := pftraceSize(t, full)
	require.Greater(t, whole, int64(8<<10), "the uncapped trace is larger than the cap below")

	for _, policy := range []string{"discard", "ring_buffer"} {
		out := t.TempDir()
		r := runCLI(t, env, append(append([]string{}, base...), "-d", out, "--perfetto-buffer-size", "4",
			"--perfetto-buffer-fill-policy", policy, "--", app, "2", "3")...)
		require.Equal(t, 1, r.code, "%s: %s", policy, r.stderr)
		require.Contains(t, r.stderr, "left out of the Perfetto trace at its --perfetto-buffer-size", policy)
		require.Contains(t, r.stderr, "raise --perfetto-buffer-size", policy)
		size := pftraceSize(t, out)
		require.LessOrEqual(t, size, int64(4<<10), policy)
		require.Positive(t, size, policy)
		man, err := rocprof.LoadManifest(out)
		require.NoError(t, err)
		var capped uint64
		for _, l := range man.LostRecords {
			capped += l.PerfettoCapped
			require.Zero(t, l.Dropped+l.Torn+l.InvalidChunks, policy)
		}
		require.Positive(t, capped, policy)
		var csvRows int64
		for _, f := range man.Files {
			if f.Format == "csv" && (f.Domain == "KERNEL_DISPATCH" || f.Domain == "HIP_API") {
				csvRows += f.Records
			}
		}
		require.Equal(t, man.DomainRecords["KERNEL_DISPATCH"]+man.DomainRecords["HIP_API"], csvRows, "%s: CSV keeps every record", policy)
	}
}

func pftraceSize(t *testing.T, dir string) int64 {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*", "*_results.pftrace"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	st, err := os.Stat(m[0])
	require.NoError(t, err)
	return st.Size()
}

// The Perfetto options rocprofv3 accepts are accepted, those without a
// meaning here with a note at --log-level info (issue 41: AMD's
// kernel-rename test passes --perfetto-shmem-size-hint, which was
// refused); a value rocprofv3 refuses is refused (issue 35).
func TestPerfettoOptionsWithoutMeaningAreAccepted(t *testing.T) {
	env := []string{builtLibs(t)}
	for _, c := range []struct {
		args []string
		note string
	}{
		{[]string{"--perfetto-backend", "system"}, "--perfetto-backend system changes nothing in rocprof-go"},
		{[]string{"--perfetto-shmem-size-hint", "64"}, "--perfetto-shmem-size-hint 64 changes nothing in rocprof-go"},
		{[]string{"--perfetto-backend", "inprocess"}, ""},
	} {
		r := runCLI(t, env, append(append([]string{"--kernel-trace", "-f", "pftrace", "--log-level", "info"}, c.args...), "--echo", "--", "true")...)
		require.Equal(t, 0, r.code, r.stderr)
		if c.note != "" {
			require.Contains(t, r.stderr, c.note)
		}
		r = runCLI(t, env, append(append([]string{"--kernel-trace", "-f", "pftrace"}, c.args...), "--echo", "--", "true")...)
		require.Equal(t, 0, r.code, r.stderr)
		require.NotContains(t, r.stderr, "changes nothing", "a note, not a warning")
	}
	// The environment's variable too (rocprofv3's, read as a default).
	r := runCLI(t, append(env, "ROCPROF_PERFETTO_SHMEM_SIZE_HINT_KB=64"), "--kernel-trace", "--echo", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--perfetto-shmem-size-hint", "big"}, `option --perfetto-shmem-size-hint: invalid integer "big"`},
		{[]string{"--perfetto-buffer-size", "0"}, "option --perfetto-buffer-size: must be a positive number of KB"},
	} {
		r := runCLI(t, env, append(append([]string{"--kernel-trace", "-f", "pftrace"}, c.args...), "--", "true")...)
		require.Equal(t, 2, r.code, r.stderr)
		require.Contains(t, r.stderr, c.want)
	}
}

// --rocm-root is honoured (issue 35): the app loads the ROCm runtime of
// that root (its lib/ leads LD_LIBRARY_PATH), and runs on it; a root
// without a ROCm runtime is refused before the app starts.
func TestRocmRootGivesTheAppItsLibraries(t *testing.T) {
	app := sampleApp(t, "multistream")
	env := []string{builtLibs(t)}
	root := t.TempDir()
	lib := filepath.Join(root, "lib")
	require.NoError(t, os.Mkdir(lib, 0o755))
	for _, l := range []string{"libamdhip64.so.5", "libhsa-runtime64.so.1"} {
		require.NoError(t, os.Symlink(filepath.Join("/usr/lib/x86_64-linux-gnu", l), filepath.Join(lib, l)))
	}
	out := t.TempDir()
	r := runCLI(t, append(env, "LD_DEBUG=libs"), "--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", out,
		"--rocm-root", root, "--", app, "2", "3")
	require.Equal(t, 0, r.code, r.stderr)
	for _, l := range []string{"libamdhip64.so.5", "libhsa-runtime64.so.1"} {
		require.Contains(t, r.stderr, "calling init: "+filepath.Join(lib, l), "the app loaded %s from the root", l)
	}
	man, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	require.Positive(t, man.DomainRecords["KERNEL_DISPATCH"])

	r = runCLI(t, env, "--kernel-trace", "--rocm-root", t.TempDir(), "--", "true")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "holds no ROCm runtime")
	require.False(t, strings.Contains(r.stderr, "calling init"))
}
