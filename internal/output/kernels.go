package output

import (
	"errors"
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// KernelSymbols returns the distinct kernel symbols (as loaded, mangled)
// the spools of a directory recorded, sorted: every kernel the app's code
// objects held, dispatched or not. Unreadable spools are left out (Write
// reports them).
func KernelSymbols(spoolDir string) ([]string, error) {
	paths, err := tracing.List(spoolDir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range paths {
		r, err := tracing.Open(p)
		if errors.Is(err, tracing.ErrNotSpool) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for r.Next() {
			if r.Kind() == tracing.KindKernelSymbol {
				seen[model.ValidString(string(r.KernelSymbol().Name))] = true
			}
		}
		_ = r.Close()
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}
