package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
)

func writeBatch(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jobs.yaml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

func TestBatchThreeJobsOneFailing(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	path := writeBatch(t, `batch:
  - name: one
    command: [sh, -c, "echo $GREETING > out.txt"]
    options: [--kernel-trace]
    env: {GREETING: hello}
  - name: two
    command: [sh, -c, "pwd > `+"`"+`echo $PWD_FILE`+"`"+`"]
    options: [--kernel-trace]
    dir: sub
    env: {PWD_FILE: /dev/null}
  - name: three
    command: [sh, -c, "exit 4"]
    options: [--kernel-trace]
`)
	require.NoError(t, os.MkdirAll(filepath.Join(filepath.Dir(path), "sub"), 0o755))
	b, err := LoadBatch(path)
	require.NoError(t, err)
	out := t.TempDir()
	results, ok := RunBatch(context.Background(), b, out, false, Options{})
	require.False(t, ok)
	require.Len(t, results, 3)
	require.True(t, results[0].OK)
	require.True(t, results[1].OK)
	require.False(t, results[2].OK)
	require.Equal(t, 4, results[2].Exit)
	for _, n := range []string{"one", "two", "three"} {
		m, err := LoadManifest(filepath.Join(out, n))
		require.NoError(t, err, n)
		require.Len(t, m.Passes, 1)
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(data), "env and the batch file's directory reach the app")
	var sb strings.Builder
	WriteBatchSummary(&sb, results, 3)
	require.Contains(t, sb.String(), "3 of 3 jobs ran: 2 ok, 1 failed")
}

func TestBatchStopsAtFirstFailureUnlessKeepGoing(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	text := `batch:
  - {name: a, command: [sh, -c, "exit 2"], options: [--kernel-trace]}
  - {name: b, command: ["true"], options: [--kernel-trace]}
`
	b, err := LoadBatch(writeBatch(t, text))
	require.NoError(t, err)
	results, ok := RunBatch(context.Background(), b, t.TempDir(), false, Options{})
	require.False(t, ok)
	require.Len(t, results, 1)
	results, ok = RunBatch(context.Background(), b, t.TempDir(), true, Options{})
	require.False(t, ok)
	require.Len(t, results, 2)

	// An expected failure is a success.
	b, err = LoadBatch(writeBatch(t, `batch:
  - {name: a, command: [sh, -c, "exit 2"], options: [--kernel-trace], expect_exit: 2}
  - {name: b, command: ["true"], options: [--kernel-trace]}
`))
	require.NoError(t, err)
	_, ok = RunBatch(context.Background(), b, t.TempDir(), true, Options{})
	require.True(t, ok)
}

func TestBatchFileErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"jobs: []\n", "not valid"},
		{"batch: []\n", "no jobs"},
		{"batch:\n  - name: a\n", "no command"},
		{"batch:\n  - {name: 'a b', command: [x]}\n", "must be letters"},
		{"batch:\n  - {name: a, command: [x], timeout: soon}\n", "not a duration"},
		{"batch:\n  - {name: a, command: [x]}\n  - {name: a, command: [y]}\n", "two jobs are named"},
		// A "--" in a job's options would run what follows it instead of
		// the job's command, and the table would say ok.
		{"batch:\n  - {name: a, command: [./app], options: [--kernel-trace, --, /bin/true]}\n",
			`job "a": options[1] is "--", which would run ["/bin/true"] instead of the job's command: remove it from options`},
	} {
		_, err := LoadBatch(writeBatch(t, tc.text))
		require.ErrorContains(t, err, tc.want, tc.text)
	}
}

// Every job's options are checked before the first job runs: a wrong
// option, counter or input file in a later job names that job.
func TestCheckBatchFindsMistakesInLaterJobs(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	for _, c := range []struct{ job, want string }{
		{`{name: late, command: ["true"], options: [--kernal-trace]}`, `batch job "late": option --kernal-trace: unrecognized option; did you mean --kernel-trace?`},
		{`{name: counters, command: ["true"], options: [--virtual-gpu, --pmc, SQ_WAVE]}`, `batch job "counters": `},
		{`{name: input, command: ["true"], options: [-i, nope.txt]}`, `batch job "input": input file: open nope.txt`},
		{`{name: format, command: ["true"], options: [-f, xml]}`, `batch job "format": option -f: invalid choice "xml"`},
	} {
		path := writeBatch(t, "batch:\n  - {name: first, command: [\"true\"], options: [--kernel-trace]}\n  - "+c.job+"\n")
		b, err := LoadBatch(path)
		require.NoError(t, err)
		err = CheckBatch(b, t.TempDir(), Options{})
		require.ErrorContains(t, err, c.want)
		require.ErrorContains(t, err, "(no job ran: fix its options in the batch file)")
	}
	path := writeBatch(t, "batch:\n  - {name: a, command: [\"true\"], options: [--kernel-trace]}\n  - {name: b, command: [\"true\"], options: [--virtual-gpu, --pmc, SQ_WAVES]}\n")
	b, err := LoadBatch(path)
	require.NoError(t, err)
	require.NoError(t, CheckBatch(b, t.TempDir(), Options{}))
}
