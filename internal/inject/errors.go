package inject

import (
	"errors"
	"fmt"
	"syscall"
)

// Error is a refusal or a failure to attach: Cause says what is wrong and
// Fix what the user can do, one line each; Err is the underlying error, if
// any (errors.Is/As reach it through Unwrap).
type Error struct {
	PID        int
	Cause, Fix string
	Err        error
}

// Error is "cannot attach to PID N: <cause>; <fix>".
func (e *Error) Error() string {
	s := fmt.Sprintf("cannot attach to PID %d: %s", e.PID, e.Cause)
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Exited reports whether err says the target exited before or during the
// attach (the caller then has nothing to undo).
func Exited(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Cause == causeExited
}

const (
	causeExited = "it exited during the attach"
	fixExited   = "nothing of the profiler is left in it; attach to a process that keeps running"
)

func exitedError(pid int, err error) *Error {
	return &Error{PID: pid, Cause: causeExited, Fix: fixExited, Err: err}
}

// gone reports whether err from a ptrace or /proc access means the
// process or thread no longer exists.
func gone(err error) bool {
	return errors.Is(err, syscall.ESRCH) || errors.Is(err, syscall.ENOENT)
}
