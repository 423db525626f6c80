//go:build !(linux && amd64)

package inject

import "context"

func drive(ctx context.Context, tg *target, lib, sym, arg string, rep *Report) (int, error) {
	return 0, &Error{PID: tg.pid, Cause: "rocprof-go was built for another architecture than x86-64 Linux",
		Fix: "use the x86-64 Linux build of rocprof-go"}
}
