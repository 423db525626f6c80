// Package slurm runs rocprof-go in real Slurm jobs on a one-node cluster
// that each test starts itself (issue 33): Debian's slurm-wlm (slurmctld
// and slurmd in the foreground, as root) with munge authentication, every
// file of it — slurm.conf, the munge key and socket, the controller's state,
// the node's spool, the daemons' logs — in a temporary directory, on free
// ports, with process tracking that needs no cgroup (proctrack/linuxproc,
// task/none), so it runs in a container and never touches the machine's own
// Slurm or munge. The node has the machine's CPUs and memory (slurmd -C).
//
// It owns that cluster's life: a test waits (polling sinfo, with a deadline
// of minutes) until the node is idle, and at its end cancels the jobs,
// stops the daemons, kills whatever process still carries the cluster's
// SLURM_CONF (a job step's slurmstepd and tasks included), and removes the
// directory; every wait is bounded by the test binary's deadline, so a
// hung step fails the test and the cleanup still runs.
//
// The tests run the commands docs/mpi.md shows in its "Slurm" section,
// exactly as shown (TestDocShowsTheCommandsAsTested checks it): srun
// starting four ranks of rocprof-go on the virtual GPU, an sbatch job whose
// script runs Open MPI's mpirun (the MPI rank, not the batch step's
// SLURM_PROCID, names the outputs), an srun step with one failing rank, and
// scancel of a running job (every rank still writes its outputs).
// The packages they need (slurm-wlm, munge, openmpi-bin) are in the
// Makefile's APT_TEST_PACKAGES: a missing one fails the test naming
// `make deps`, never skips it.
package slurm
