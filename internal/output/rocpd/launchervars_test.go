package rocpd

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A process's stored environment keeps every variable of the rank table
// (docs/mpi.md: placeholder.LauncherOf), so the analyses read the rank,
// size and launcher of a stored process as the run did; SLURM_STEP_ID tells
// an srun task from the batch step. Nothing else is kept by default.
func TestStoredEnvironmentKeepsTheRankTable(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMIX_NAMESPACE",
		"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMI_JOBID", "MPI_RANK", "MPI_RANKID",
		"MPI_LOCALRANKID", "MPI_SIZE", "MPI_NRANKS", "MPI_LOCALNRANKS", "SLURM_PROCID", "SLURM_STEP_ID", "SLURM_STEPID",
		"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_JOB_ID", "SLURM_RESTART_COUNT"} {
		require.True(t, launcherVariable(v), v)
	}
	for _, v := range []string{"HOME", "AWS_SECRET_ACCESS_KEY", "PMIX_SERVER_URI4"} {
		require.False(t, launcherVariable(v), v)
	}
}
