package placeholder

import "strings"

// Launcher is what a process's environment says about the launcher that
// started it: its rank and size, the variables they came from, and the
// job it belongs to. The zero value (Name "") is a process no launcher
// started.
type Launcher struct {
	Name    string // "Open MPI", "PMIx", "MVAPICH2", "PMI", "MPI", "Slurm srun", "Slurm batch step"
	Rank    string // %rank%
	Size    string // %size%
	RankVar string // the variable Rank was read from
	// Job identifies the launch the process belongs to (Open MPI's or PMIx's
	// namespace, the Slurm job and step): every rank of one mpirun or srun
	// has the same; "" when the launcher exports none.
	Job string
}

// launcherRule is one row of the rank table: a launcher, the variables it
// sets for each process it starts, and how its job is named.
type launcherRule struct {
	name  string
	ranks []string // the first one set is the rank
	sizes []string // the first one set is the size
	jobs  []string // the values set name the job
}

// launcherRules is the rank table (docs/mpi.md), in the order it is
// trusted: the first launcher whose rank variable is set started the
// process. An MPI launcher comes before Slurm because mpirun or mpiexec run
// inside a Slurm allocation hand their ranks the allocation's
// SLURM_PROCID: the batch step's 0 on the first node, the task number of
// the srun step that started their daemon (orted, hydra_pmi_proxy) on the
// others. When srun starts the ranks itself, an MPI variable it sets
// (PMIX_RANK with --mpi=pmix, PMI_RANK with --mpi=pmi2) equals
// SLURM_PROCID.
var launcherRules = []launcherRule{
	{name: "Open MPI", ranks: []string{"OMPI_COMM_WORLD_RANK"}, sizes: []string{"OMPI_COMM_WORLD_SIZE"},
		jobs: []string{"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}},
	{name: "PMIx", ranks: []string{"PMIX_RANK"}, sizes: []string{"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"},
		jobs: []string{"PMIX_NAMESPACE"}},
	{name: "MVAPICH2", ranks: []string{"MV2_COMM_WORLD_RANK"}, sizes: []string{"MV2_COMM_WORLD_SIZE"},
		jobs: []string{"PMI_JOBID", "SLURM_JOB_ID"}},
	{name: "PMI", ranks: []string{"PMI_RANK"}, sizes: []string{"PMI_SIZE"},
		jobs: []string{"PMI_JOBID", "SLURM_JOB_ID"}},
	{name: "MPI", ranks: []string{"MPI_RANK", "MPI_RANKID", "MPI_LOCALRANKID"},
		sizes: []string{"MPI_SIZE", "MPI_NRANKS", "MPI_LOCALNRANKS"}, jobs: []string{"SLURM_JOB_ID"}},
}

// LauncherOf reads the launcher that started a process from its
// environment (the rank table, docs/mpi.md).
func LauncherOf(lookup func(string) (string, bool)) Launcher {
	get := func(names []string) (string, string) {
		for _, n := range names {
			if v, ok := lookup(n); ok && v != "" {
				return v, n
			}
		}
		return "", ""
	}
	jobOf := func(names []string) string {
		var parts []string
		for _, n := range names {
			if v, ok := lookup(n); ok && v != "" {
				parts = append(parts, n+"="+v)
			}
		}
		return strings.Join(parts, ",")
	}
	for _, r := range launcherRules {
		rank, from := get(r.ranks)
		if from == "" {
			continue
		}
		size, _ := get(r.sizes)
		if size == "" {
			size = "1"
		}
		return Launcher{Name: r.name, Rank: rank, Size: size, RankVar: from, Job: jobOf(r.jobs)}
	}
	rank, ok := lookup("SLURM_PROCID")
	if !ok || rank == "" {
		return Launcher{}
	}
	step, _ := get([]string{"SLURM_STEP_ID", "SLURM_STEPID"})
	if step == "" || step == "batch" || step == "extern" || step == "interactive" {
		// The batch script (sbatch) or salloc's shell: one process, not a
		// task of a step.
		return Launcher{Name: "Slurm batch step", Rank: rank, Size: "1", RankVar: "SLURM_PROCID",
			Job: jobOf([]string{"SLURM_JOB_ID"}) + ",step=" + step}
	}
	size, _ := get([]string{"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"})
	if size == "" {
		size = "1"
	}
	return Launcher{Name: "Slurm srun", Rank: rank, Size: size, RankVar: "SLURM_PROCID",
		Job: jobOf([]string{"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_RESTART_COUNT"})}
}
