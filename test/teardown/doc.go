// Package teardown tests what a launcher's teardown leaves of a profiled
// MPI job (issue 33): 4 ranks under Debian's Open MPI mpirun, 1M traced
// HIP calls each, one rank segfaulting after its calls; right after the
// apps exit every rocprof-go gets SIGTERM and, a second later, SIGKILL,
// as mpirun and Slurm tear a job down. Every rank's records must be in its
// outputs or recovered by `rocprof-go convert` (and used by `rocprof-go
// summary`) from the output directory (docs/mpi.md, "Teardown"). It runs
// A second case SIGKILLs one rank's rocprof-go while its app still runs
// (spools on the output directory): `convert -i OUTDIR` converts its run
// directory exactly as `convert -i` of that directory does. It runs
// the built CLI (build/rocprof-go, or $ROCPROF_GO_BUILD/rocprof-go) and
// build/testdata/teardown_calls.
package teardown
