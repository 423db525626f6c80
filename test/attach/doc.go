// Package attachtest tests `rocprof-go --attach PID` end to end (issue 42,
// docs/attach.md) on every runtime of the ROCm matrix: a server started
// plainly on the virtual GPU (testdata/apps/attach_server: no profiler
// variable in its environment, only the virtual GPU's LD_PRELOAD) is
// attached to for 2.5 s with --kernel-trace --hip-trace --marker-trace,
// detached, attached to again and detached; every attach exits 0 with
// kernel, HIP and marker records of its window, every detach leaves the
// process as it was (no mapping of the profiler's libraries, as many
// threads and descriptors, the same signal handlers), and the server then
// ends with exactly the output of a run nobody attached to. Also: a
// process tree of 4 fork+exec workers (4 outputs, one per worker's pid), 4
// Python multiprocessing "spawn" workers that reach HIP through ctypes,
// 64 threads inside HIP calls while attaching, the CLI SIGKILLed while
// attached (the target detaches by itself; `rocprof-go convert` writes
// what was recorded), and a statically linked target (refused with one
// line, untouched).
//
// The server and the CLI run in the same runtime's root (each through
// scripts/rocm-root.sh run, which shares the host's /proc, /tmp and the
// repository, in a private mount namespace but not a private PID
// namespace): the pid the server prints is the pid the CLI is given, and
// the library the CLI caches (XDG_CACHE_HOME in the test's temporary
// directory) is at the same path for the target. They run the built CLI
// (build/rocprof-go, or $ROCPROF_GO_BUILD/rocprof-go) and the apps `make
// test` builds (mk/attach.mk, mk/rocm.mk).
package attachtest
