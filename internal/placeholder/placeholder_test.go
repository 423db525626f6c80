package placeholder

import (
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

// Placeholders are rocprof-go's: text the app was given, or a variable's
// value, is never expanded again (before, an app argument %cwd% in
// -o %args% became rocprof-go's working directory, slashes and all).
func TestValuesAreNotExpandedAgain(t *testing.T) {
	env := map[string]string{"OUT": "%pid%_{cwd}"}
	p := Process{Pid: 7, Cwd: "/home/alice/secret", Hostname: "n%p",
		Argv:      []string{"./app", "%cwd%", "{pid}", "%env{OUT}%", "%arg1%"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for _, tc := range []struct{ in, want string }{
		{"%args%", "%cwd%_{pid}_%env{OUT}%_%arg1%"},
		{"%arg1%-%arg2%", "%cwd%-{pid}"},
		{"%env{OUT}%", "%pid%_{cwd}"},
		{"%hostname%", "n%p"},
		{"%pid%_%arg9%-x", "7_x"},
	} {
		require.Equal(t, tc.want, Expand(tc.in, p), tc.in)
	}
}

func TestIsPerProcess(t *testing.T) {
	require.True(t, IsPerProcess("%hostname%/%pid%"))
	require.True(t, IsPerProcess("run_{ppid}"))
	require.True(t, IsPerProcess("x_%p"))
	require.True(t, IsPerProcess("%argt%-trace"))
	require.False(t, IsPerProcess("out_%rank%"))
	require.False(t, IsPerProcess("results"))
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
	env := map[string]string{"USER": "alice"}
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
