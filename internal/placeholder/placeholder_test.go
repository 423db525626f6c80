package placeholder

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "MYVAR": " /a b/c", "SLURM_JOB_ID": "77"}
	p := Process{
		Pid: 100, Ppid: 99, Pgid: 98, Sid: 97, PSize: 2, Hostname: "node1", Cwd: "/w",
		Argv:      []string{"/usr/bin/app", "--", "./in.dat", "-n"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Launch:    time.Date(2026, 11, 22, 6, 5, 0, 0, time.UTC),
	}
	for _, tc := range []struct{ in, want string }{
		{"%hostname%/%pid%", "node1/100"},
		{"{hostname}/{pid}", "node1/100"},
		{"out_%rank%_of_%size%", "out_3_of_8"},
		{"%h_%p_%r_%s_%j", "node1_100_3_8_77"},
		{"%env{MYVAR}%", "a_b_c"},
		{"$ENV{MYVAR}-$env{NOPE}", "a_b_c-"},
		{"%argt%", "app_in.dat_-n"},
		{"%args%", "in.dat_-n"},
		{"%tag%", "app"},
		{"%arg2%-%arg9%-x", "in.dat-x"},
		{"%cwd%/%ppid%-%pgid%-%psid%-%psize%", "/w/99-98-97-2"},
		{"%launch_date%", "2026-11-22"},
		{"%launch_time%", "2026-11-22_06.05"},
		{"%nid%", "3"},
	} {
		require.Equal(t, tc.want, Expand(tc.in, p), tc.in)
	}
}

// Placeholders are rocprof-go's: text the app was given, or the value of
// any placeholder but a variable's, is never expanded again (before, an app
// argument %cwd% in -o %args% became rocprof-go's working directory,
// slashes and all).
func TestValuesAreNotExpandedAgain(t *testing.T) {
	env := map[string]string{"OUT": "%pid%_{cwd}"}
	p := Process{Pid: 7, Cwd: "/home/alice/secret", Hostname: "n%p",
		Argv:      []string{"./app", "%cwd%", "{pid}", "%env{OUT}%", "%arg1%"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for _, tc := range []struct{ in, want string }{
		{"%args%", "%cwd%_{pid}_%env{OUT}%_%arg1%"},
		{"%arg1%-%arg2%", "%cwd%-{pid}"},
		{"%hostname%", "n%p"},
		{"%pid%_%arg9%-x", "7_x"},
	} {
		require.Equal(t, tc.want, Expand(tc.in, p), tc.in)
	}
}

// A variable's value is expanded as rocprofv3's format_path expands it
// (again, until nothing changes): AMD's summary test sets
// ARBITRARY_ENV_VARIABLE=%tag%-trace-inp-yaml and writes to
// -d .../%env{ARBITRARY_ENV_VARIABLE}%, which rocprofv3 makes
// transpose-trace-inp-yaml (issue 41: rocprof-go made a directory named
// %tag%-trace-inp-yaml). The value is cleaned first (leading spaces, tabs
// and slashes dropped, the others made '_'), then expanded, so a %cwd% in it
// keeps its slashes, as in rocprofv3.
func TestVariableValuesAreExpanded(t *testing.T) {
	env := map[string]string{
		"ARBITRARY_ENV_VARIABLE": "%tag%-trace-inp-yaml",
		"NESTED":                 "%env{ARBITRARY_ENV_VARIABLE}%_%pid%",
		"WHERE":                  "%cwd%",
		"SPACED":                 " /%rank% of %size%",
		"ARGS":                   "%arg1%-%arg7%-x",
		"SELF":                   "a%env{SELF}%",
		"PING":                   "%env{PONG}%", "PONG": "%env{PING}%",
	}
	p := Process{Pid: 7, Cwd: "/w/d", Argv: []string{"/opt/bin/transpose", "2", "500"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for _, tc := range []struct{ in, want string }{
		{"/scratch/%env{ARBITRARY_ENV_VARIABLE}%", "/scratch/transpose-trace-inp-yaml"},
		{"$ENV{ARBITRARY_ENV_VARIABLE}/out", "transpose-trace-inp-yaml/out"},
		{"%q{NESTED}", "transpose-trace-inp-yaml_7"},
		{"%env{WHERE}%/x", "/w/d/x"},
		{"%env{SPACED}%", "0_of_1"},
		{"%env{ARGS}%", "2-x"},
		{"%env{UNSET}%x", "x"},
	} {
		got, err := ExpandChecked(tc.in, p)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		require.Equal(t, tc.want, Expand(tc.in, p), tc.in)
	}
	// A value that names itself: rocprofv3 loops forever; here it stops
	// and ExpandChecked says which variable.
	for _, in := range []string{"%env{SELF}%", "out/%env{PING}%"} {
		_, err := ExpandChecked(in, p)
		var ce *CycleError
		require.ErrorAs(t, err, &ce, in)
		require.Contains(t, err.Error(), "refers back to itself", in)
		require.NotPanics(t, func() { Expand(in, p) })
	}
}

// A value never climbs out of the directory the template names: a ".."
// component made from a variable's value or ROCPROF_TIME_FORMAT, or an
// absolute path the format makes, is refused by ExpandChecked (naming the
// variable and its value) and neutralised by Expand; sub-directories a
// value adds, and the ".." the template itself writes, stay.
func TestValuesDoNotClimbOut(t *testing.T) {
	env := map[string]string{"UP": "..", "DOT": ".", "SUB": "a/b", "UPTAG": "%env{UP}%",
		"ROCPROF_TIME_FORMAT": "/../%H", "ROCPROF_DATE_FORMAT": "%Y/%m"}
	p := Process{Pid: 7, Argv: []string{"./app"}, Launch: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC),
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for _, tc := range []struct{ in, src, value, neutral string }{
		{"%env{UP}%/x", "environment variable UP", "..", "__/x"},
		{"out/%env{UP}%/%env{UP}%/etc", "environment variable UP", "..", "out/__/__/etc"},
		{"out/$ENV{UP}", "environment variable UP", "..", "out/__"},
		{"out/.%env{DOT}%/x", "environment variable DOT", ".", "out/__/x"},
		{"out/%env{UPTAG}%/x", "environment variable UP", "..", "out/__/x"},
		{"out/%launch_time%", "ROCPROF_TIME_FORMAT", "/../%H", "out//__/10"},
		{"%launch_time%", "ROCPROF_TIME_FORMAT", "/../%H", "_../10"},
	} {
		_, err := ExpandChecked(tc.in, p)
		var ee *EscapeError
		require.ErrorAs(t, err, &ee, tc.in)
		require.Equal(t, tc.src, ee.Source, tc.in)
		require.Equal(t, tc.value, ee.Value, tc.in)
		require.Contains(t, err.Error(), tc.src+"="+strconv.Quote(tc.value), tc.in)
		require.Equal(t, tc.neutral, Expand(tc.in, p), tc.in)
	}
	for _, tc := range []struct{ in, want string }{
		{"out/%env{SUB}%", "out/a_b"},
		{"out/%launch_date%/x", "out/2026/12/x"},
		{"../out/%env{DOT}%x", "../out/.x"},
		{"out/x%env{UP}%", "out/x.."},
	} {
		got, err := ExpandChecked(tc.in, p)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestIsPerProcess(t *testing.T) {
	require.True(t, IsPerProcess("%hostname%/%pid%"))
	require.True(t, IsPerProcess("run_{ppid}"))
	require.True(t, IsPerProcess("x_%p"))
	require.True(t, IsPerProcess("%argt%-trace"))
	require.False(t, IsPerProcess("out_%rank%"))
	require.False(t, IsPerProcess("results"))
	t.Setenv("RPG_TEST_TRACE_DIR", "%tag%-trace")
	t.Setenv("RPG_TEST_PLAIN", "plain")
	require.True(t, IsPerProcess("out/%env{RPG_TEST_TRACE_DIR}%"), "a variable's value counts")
	require.False(t, IsPerProcess("out/%env{RPG_TEST_PLAIN}%"))
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"%hostname%/%pid%", "%env{A}%%arg1%", "{", "%", "%%p%", "$ENV{X}"} {
		f.Add(s)
	}
	p := Process{Pid: 1, Argv: []string{"a", "b"}, LookupEnv: func(string) (string, bool) { return "%pid%", true }}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Expand(s, p)
	})
}

// What a process or its environment chose (hostname, job, rank) stays one
// path component: no way outside the output directory.
func TestExpandKeepsChosenValuesInOneComponent(t *testing.T) {
	env := map[string]string{"SLURM_JOB_ID": "../../etc", "OMPI_COMM_WORLD_RANK": "a/b"}
	p := Process{Hostname: "../../..", Pid: 7, Argv: []string{"./app"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for _, in := range []string{"%hostname%/x", "%h/x", "{hostname}/x", "%job%/x", "%rank%/x", "%nid%/x"} {
		got := Expand(in, p)
		require.NotContains(t, got, "..", "%s -> %s", in, got)
		require.Equal(t, 1, strings.Count(got, "/"), "%s -> %s: one component before /x", in, got)
	}
}

// RunPart is what every process of a run resolves alike: the template up
// to its first per-process placeholder, the rest expanded (the run's files
// go there, not to the working directory).
func TestRunPart(t *testing.T) {
	env := map[string]string{"USER": "alice", "TRACE_DIR": "%tag%-trace-inp-yaml", "USERDIR": "%env{USER}%"}
	p := Process{Pid: 7, Hostname: "node0", Argv: []string{"./app"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for _, c := range []struct {
		in, part string
		cut      bool
	}{
		{"out", "out", false},
		{"out_%hostname%", "out_node0", false},
		{"out_%hostname%/%pid%", "out_node0/", true},
		{"/scratch/%env{USER}%/run_%pid%", "/scratch/alice/run_", true},
		{"%pid%", "", true},
		{"prof/{ppid}/x", "prof/", true},
		{"prof/%argt%", "prof/", true},
		{"out_%rank%", "out_", true}, // no MPI here: the ranks would be the app's children
		// A variable's value counts as written in its place (issue 41):
		// %tag% is the app's, so the run's part ends before it.
		{"/b/%env{TRACE_DIR}%", "/b/", true},
		{"/b/%env{USERDIR}%/x", "/b/alice/x", false},
	} {
		part, cut := RunPart(c.in, p)
		require.Equal(t, c.part, part, c.in)
		require.Equal(t, c.cut, cut, c.in)
	}
	// Under mpirun rocprof-go runs inside a rank: the rank is the run's.
	env["OMPI_COMM_WORLD_RANK"] = "3"
	part, cut := RunPart("out_%rank%/%pid%", p)
	require.Equal(t, "out_3/", part)
	require.True(t, cut)
}

// The launcher that started the process names its rank: under mpirun in an
// sbatch script every rank inherits the batch step's SLURM_PROCID=0 (on
// other nodes, the task number of the srun step that started orted), and
// the MPI rank must win over it (issue 33: every rank wrote 0_results.db).
func TestRankIsTheLaunchersThatStartedTheProcess(t *testing.T) {
	batch := map[string]string{"SLURM_JOB_ID": "4242", "SLURM_PROCID": "0", "SLURM_NTASKS": "8", "SLURM_STEPID": "batch"}
	with := func(extra map[string]string) map[string]string {
		env := map[string]string{}
		for k, v := range batch {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		return env
	}
	for _, tc := range []struct {
		name             string
		env              map[string]string
		launcher         string
		rank, size, from string
	}{
		{"sbatch + Open MPI mpirun", with(map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
			"PMIX_RANK": "3", "PMIX_NAMESPACE": "1476591617"}), "Open MPI", "3", "4", "OMPI_COMM_WORLD_RANK"},
		{"sbatch + mpirun, a rank on the second node (orted's srun step)", with(map[string]string{"SLURM_PROCID": "1",
			"SLURM_STEP_ID": "0", "SLURM_STEPID": "0", "OMPI_COMM_WORLD_RANK": "6", "OMPI_COMM_WORLD_SIZE": "8"}),
			"Open MPI", "6", "8", "OMPI_COMM_WORLD_RANK"},
		{"sbatch + MPICH mpiexec (Hydra)", with(map[string]string{"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0"}),
			"PMI", "2", "4", "PMI_RANK"},
		{"sbatch + MVAPICH2 mpirun_rsh", with(map[string]string{"MV2_COMM_WORLD_RANK": "5", "MV2_COMM_WORLD_SIZE": "6"}),
			"MVAPICH2", "5", "6", "MV2_COMM_WORLD_RANK"},
		{"srun --mpi=pmix", map[string]string{"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "1", "SLURM_PROCID": "7",
			"SLURM_STEP_NUM_TASKS": "16", "SLURM_NTASKS": "16", "PMIX_RANK": "7"}, "PMIx", "7", "16", "PMIX_RANK"},
		{"srun", map[string]string{"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "2", "SLURM_PROCID": "5",
			"SLURM_STEP_NUM_TASKS": "8", "SLURM_NTASKS": "8"}, "Slurm srun", "5", "8", "SLURM_PROCID"},
		{"the batch script itself", batch, "Slurm batch step", "0", "1", "SLURM_PROCID"},
		{"no launcher", map[string]string{}, "", "", "", ""},
	} {
		l := LauncherOf(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		require.Equal(t, tc.launcher, l.Name, tc.name)
		require.Equal(t, tc.rank, l.Rank, tc.name)
		require.Equal(t, tc.size, l.Size, tc.name)
		require.Equal(t, tc.from, l.RankVar, tc.name)
		if tc.launcher != "" {
			p := Process{Pid: 9, Hostname: "n", LookupEnv: func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }}
			require.Equal(t, tc.rank+"_results", Expand("%rank%_results", p), tc.name)
			require.Equal(t, tc.rank+"-"+tc.size, Expand("%r-%s", p), tc.name)
		}
	}
	// Every rank of one mpirun names the same job; two mpiruns in one
	// allocation name two.
	a := LauncherOf(func(k string) (string, bool) {
		v, ok := with(map[string]string{"OMPI_COMM_WORLD_RANK": "0", "PMIX_NAMESPACE": "11"})[k]
		return v, ok
	})
	b := LauncherOf(func(k string) (string, bool) {
		v, ok := with(map[string]string{"OMPI_COMM_WORLD_RANK": "0", "PMIX_NAMESPACE": "12"})[k]
		return v, ok
	})
	require.NotEmpty(t, a.Job)
	require.NotEqual(t, a.Job, b.Job)
}
