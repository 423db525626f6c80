// Package inject loads a library into a running x86-64 Linux process and
// calls one of its functions, through ptrace, leaving the process as it
// was: the attach half of `rocprof-go --attach` (docs/attach.md, "How the
// injection works"). It owns the checks before any ptrace (Preflight), the
// injection (Inject) and the list of a process's descendants
// (Descendants); it knows nothing of profiling.
package inject
