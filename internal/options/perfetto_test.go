package options

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An option rocprofv3 accepts is never refused for having no meaning here
// (issue 41: AMD's kernel-rename test passes --perfetto-shmem-size-hint 128
// and --perfetto-backend inprocess, and rocprof-go refused the hint): the
// hints are accepted, their values checked as rocprofv3's argparse checks
// them, with one note each.
func TestOptionsWithoutMeaningHereAreAcceptedWithANote(t *testing.T) {
	// AMD's kernel-rename test's command line (tests/rocprofv3/kernel-rename).
	p := resolve(t, "-M", "--sys-trace", "no", "--hsa-trace=0", "--hsa-core-trace=1", "--hip-compiler-trace", "False",
		"--hip-runtime-trace", "--kernel-trace", "--memory-copy-trace", "-d", t.TempDir()+"/%argt%-trace-cmd-line", "-o", "out",
		"--output-format", "pftrace", "json", "otf2", "--log-level", "env", "--kernel-rename",
		"--perfetto-shmem-size-hint", "128", "--perfetto-buffer-size", "2048000",
		"--perfetto-buffer-fill-policy", "ring_buffer", "--perfetto-backend", "inprocess", "--", "transpose")
	c := p.Passes[0]
	require.Equal(t, 128, c.PerfettoShmemSizeHint)
	require.Equal(t, 2048000, c.PerfettoBufferSize)
	require.Equal(t, []string{"--perfetto-shmem-size-hint 128 changes nothing in rocprof-go: the app's records go to its spool, " +
		"not through a Perfetto shared memory buffer, and the trace is written after the app ends (--perfetto-buffer-size caps it)"}, p.Notes)
	require.Empty(t, p.Warnings)

	for _, c := range []struct {
		args []string
		env  map[string]string
		note string
	}{
		{[]string{"--perfetto-backend", "system"}, nil, "--perfetto-backend system changes nothing in rocprof-go"},
		{nil, map[string]string{"ROCPROF_PERFETTO_SHMEM_SIZE_HINT_KB": "64"}, "--perfetto-shmem-size-hint 64 changes nothing"},
		{[]string{"--benchmark-mode", "execution-profile"}, nil, "--benchmark-mode execution-profile changes nothing in rocprof-go"},
		{nil, map[string]string{"ROCPROF_BENCHMARK_MODE": "sdk-callback-overhead"}, "--benchmark-mode sdk-callback-overhead changes nothing"},
	} {
		p, err := resolveEnv(c.env, append(append([]string{"--kernel-trace", "-f", "pftrace"}, c.args...), "--", "app")...)
		require.NoError(t, err, c.args)
		require.Len(t, p.Notes, 1, c.args)
		require.Contains(t, p.Notes[0], c.note, c.args)
	}
	// Values are checked as rocprofv3's argparse checks them: an integer,
	// one of the choices.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--perfetto-shmem-size-hint", "big"}, `option --perfetto-shmem-size-hint: invalid integer "big"`},
		{[]string{"--perfetto-backend", "remote"}, `invalid choice "remote" (choose from inprocess, system)`},
		{[]string{"--benchmark-mode", "fast"}, `invalid choice "fast"`},
		{[]string{"--perfetto-buffer-size", "0"}, "option --perfetto-buffer-size: must be a positive number of KB"},
	} {
		_, err := resolveEnv(nil, append(append([]string{"--kernel-trace"}, c.args...), "--", "app")...)
		require.ErrorContains(t, err, c.want, c.args)
	}
}
