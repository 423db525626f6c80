// Package attach runs one attach end to end (rocprof-go --attach PID,
// docs/attach.md): the processes to profile are already running, started
// with no profiler environment at all.
//
// It owns, between the run directory launch made (launch.AttachPass) and
// the outputs the pipeline writes from the pass's spools as after any
// pass:
//
//   - the configuration file in the run's private directory (NAME=VALUE
//     lines of the ROCPROF_* contract the launcher would have put in the
//     app's environment, and the socket's path), mode 0600;
//   - the unix socket (0600) the agent of each process reports on: the
//     protocol's lines are "ready <pid>", "error <text>" (agent to CLI),
//     "detach" (CLI to agent) and "detached <pid> <restored-slots>
//     <lost-dispatches>"; an agent that reads EOF detaches by itself;
//   - the injection of the target and, with --attach-children, of its
//     descendants (those running at the attach and those started while
//     attached), each through internal/inject (preflight, then dlopen of
//     the verified preload library and a call of rpg_attach_start in the
//     process);
//   - the wait: --attach-duration-msec, Enter on a terminal, SIGINT or
//     SIGTERM to the CLI (which detaches instead of dying), or every
//     attached process gone;
//   - the detach of every process, bounded, and its verification in
//     /proc/PID/maps (the library no longer mapped);
//   - the Report run.json's "attach" object is made from.
//
// No Go code ever runs in a target: a Go runtime can never leave a
// process again, so the injected code is the plain-C preload library
// alone.
package attach
