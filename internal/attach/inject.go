package attach

import (
	"context"

	"github.com/rocprof-go/rocprof-go/internal/inject"
)

// ptrace is internal/inject's injection, the one an attach uses unless
// Options gives another.
type ptrace struct{}

func (ptrace) Preflight(pid int, lib string) error { return inject.Preflight(pid, lib) }

func (ptrace) Inject(ctx context.Context, pid int, lib, sym, arg string) (int, error) {
	return inject.Inject(ctx, pid, lib, sym, arg)
}

func (ptrace) Descendants(pid int) ([]int, error) { return inject.Descendants(pid) }
