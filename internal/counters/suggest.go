package counters

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/textdist"
)

// UnknownCounterError names a counter the agent does not have, with the
// nearest name it does have and the architectures that define it.
type UnknownCounterError struct {
	Name       string
	Arch       string
	Suggestion string   // nearest known name on Arch ("" if none is close)
	OtherArchs []string // built-in architecture keys that define Name
}

func (e *UnknownCounterError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "counter %q is not available on %s", e.Name, e.Arch)
	if len(e.OtherArchs) > 0 {
		fmt.Fprintf(&sb, " (it is defined for %s)", strings.Join(e.OtherArchs, ", "))
	}
	if e.Suggestion != "" {
		fmt.Fprintf(&sb, "; did you mean %q?", e.Suggestion)
	}
	fmt.Fprintf(&sb, " Run `rocprof-go avail --arch %s` to list its counters.", e.Arch)
	return sb.String()
}

func (db *DB) unknown(name string) error {
	e := &UnknownCounterError{Name: name, Arch: db.Arch}
	best, bestD := "", 1<<30
	lname := strings.ToLower(name)
	for _, c := range db.Counters {
		d := textdist.Levenshtein(lname, strings.ToLower(c.Name))
		if d < bestD || d == bestD && c.Name < best {
			best, bestD = c.Name, d
		}
	}
	// Only suggest names that are plausibly a typo or a near variant.
	if best != "" && bestD <= max(3, len(name)/3) {
		e.Suggestion = best
	}
	if cs, err := builtinCounters(); err == nil {
		seen := map[string]bool{}
		for _, c := range cs {
			if c.Name != name {
				continue
			}
			for _, d := range c.Defs {
				for _, a := range d.Archs {
					seen[a] = true
				}
			}
		}
		for a := range seen {
			e.OtherArchs = append(e.OtherArchs, a)
		}
		sort.Strings(e.OtherArchs)
	}
	return e
}
