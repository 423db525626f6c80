package inject

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// RTLD_NOW|RTLD_LOCAL: every symbol bound at load, none of the library's
// offered to the process's later lookups.
const (
	rtldNow   = 0x2
	rtldLocal = 0x0
)

// defaultSearch bounds the search for a thread when ctx has no deadline.
const defaultSearch = 10 * time.Second

// Report says how an injection went: for the CLI's log and the
// benchmarks.
type Report struct {
	TID    int    // the thread that made the calls
	How    string // where it was: "blocked in nanosleep", "at the entry of poll", ...
	Tried  int    // threads seized to find it
	Loader string // the dlopen called: "dlopen in libc.so.6", ...
	// Held is how long the thread ran the calls, from its registers saved
	// to its detach (the thread's own work waited that long).
	Held time.Duration
}

// Inject makes one thread of pid call dlopen(lib, RTLD_NOW|RTLD_LOCAL) and
// then sym(arg) in that library (arg is a C string copied into the
// target), restores the thread exactly and detaches. It returns sym's int
// return value. On dlopen failure the target's dlerror() text is in the
// error. ctx bounds the search for a thread at a safe point; once the
// thread runs the calls they are let finish (doc.go says why).
func Inject(ctx context.Context, pid int, lib, sym, arg string) (int, error) {
	return inject(ctx, pid, lib, sym, arg, nil)
}

// InjectReport is Inject, also saying which thread made the calls and how
// long it was held.
func InjectReport(ctx context.Context, pid int, lib, sym, arg string) (int, Report, error) {
	var rep Report
	ret, err := inject(ctx, pid, lib, sym, arg, &rep)
	return ret, rep, err
}

func inject(ctx context.Context, pid int, lib, sym, arg string, rep *Report) (int, error) {
	for _, s := range []string{lib, sym, arg} {
		if strings.IndexByte(s, 0) >= 0 {
			return 0, &Error{PID: pid, Cause: fmt.Sprintf("%q holds a NUL byte and cannot be passed as a C string", s),
				Fix: "this is a bug of rocprof-go: report it"}
		}
	}
	tg, e := preflight(pid, lib)
	if e != nil {
		return 0, e
	}
	if rep == nil {
		rep = &Report{}
	}
	rep.Loader = tg.loader.how
	type result struct {
		ret int
		err error
	}
	done := make(chan result, 1)
	go func() {
		ret, err := drive(ctx, tg, lib, sym, arg, rep)
		done <- result{ret, err}
	}()
	r := <-done
	return r.ret, r.err
}
