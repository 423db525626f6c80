package counters

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

// Request is one requested counter: NAME, NAME[i] (instance i of a basic
// counter) and an optional :device=N qualifier.
type Request struct {
	Raw      string
	Name     string
	Instance int // -1: every instance
	Device   int // -1: every GPU
}

// ParseRequest parses "NAME", "NAME[3]", "NAME:device=1" or "NAME[3]:device=1".
func ParseRequest(s string) (Request, error) {
	r := Request{Raw: s, Instance: -1, Device: -1}
	name := strings.TrimSpace(s)
	if base, q, ok := strings.Cut(name, ":"); ok {
		k, v, ok := strings.Cut(q, "=")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if !ok || strings.TrimSpace(k) != "device" || err != nil || n < 0 {
			return r, fmt.Errorf("counter %q: the only qualifier is :device=N with N a GPU index", s)
		}
		r.Device, name = n, strings.TrimSpace(base)
	}
	if i := strings.IndexByte(name, '['); i >= 0 {
		if !strings.HasSuffix(name, "]") {
			return r, fmt.Errorf("counter %q: an instance is written NAME[i]", s)
		}
		n, err := strconv.Atoi(name[i+1 : len(name)-1])
		if err != nil || n < 0 {
			return r, fmt.Errorf("counter %q: instance %q is not a non-negative integer", s, name[i+1:len(name)-1])
		}
		r.Instance, name = n, name[:i]
	}
	if name == "" {
		return r, fmt.Errorf("empty counter name in %q", s)
	}
	r.Name = name
	return r, nil
}

// ParseRequest is the package's ParseRequest, except that a name defined
// with its brackets (rocprofiler-compute defines TCC_HIT[3] as a select()
// of TCC_HIT in its counter definitions) is that counter, not an instance.
func (db *DB) ParseRequest(s string) (Request, error) {
	name, ok := db.definedWithBrackets(s)
	if !ok {
		return ParseRequest(s)
	}
	qualifier := ""
	if i := strings.IndexByte(s, ':'); i >= 0 {
		qualifier = s[i:]
	}
	r, err := ParseRequest("X" + qualifier) // the :device=N qualifier alone
	r.Raw, r.Name = s, name
	return r, err
}

// definedWithBrackets finds the counter a request names when the database
// defines it with its brackets ("NAME[i]" or "NAME[i]:device=N").
func (db *DB) definedWithBrackets(s string) (string, bool) {
	name := strings.TrimSpace(s)
	if base, _, ok := strings.Cut(name, ":"); ok {
		name = strings.TrimSpace(base)
	}
	if !strings.Contains(name, "[") {
		return "", false
	}
	_, ok := db.byName[name]
	return name, ok
}

// Leaf is a hardware counter a request needs, with its accumulate mode.
type Leaf struct {
	Counter *Counter
	Accum   aql.AccumFlag
}

var accumModes = map[string]aql.AccumFlag{"NONE": aql.AccumNone, "LOW_RES": aql.AccumLoRes, "HIGH_RES": aql.AccumHiRes}

// Leaves lists the hardware counters behind a counter, in expression order
// without duplicates. Constants need none.
func (db *DB) Leaves(c *Counter) ([]Leaf, error) {
	var out []Leaf
	err := db.leaves(c, &out, map[string]bool{})
	return out, err
}

func (db *DB) leaves(c *Counter, out *[]Leaf, busy map[string]bool) error {
	switch c.Kind {
	case Constant:
		return nil
	case Basic:
		addLeaf(out, Leaf{c, aql.AccumNone})
		return nil
	}
	if busy[c.Name] {
		return fmt.Errorf("counter %s is defined in terms of itself", c.Name)
	}
	busy[c.Name] = true
	defer delete(busy, c.Name)
	var err error
	Walk(c.Expr, func(n Node) {
		if err != nil {
			return
		}
		switch x := n.(type) {
		case *RefNode:
			var r *Counter
			if r, err = db.ref(x.Name); err == nil {
				err = db.leaves(r, out, busy)
			}
		case *AccumulateNode:
			var r *Counter
			if r, err = db.ref(x.Name); err != nil {
				return
			}
			if r.Kind != Basic || r.Block != "SQ" {
				err = fmt.Errorf("accumulate(%s): only SQ hardware counters can be accumulated", x.Name)
				return
			}
			addLeaf(out, Leaf{r, accumModes[x.Mode]})
		}
	})
	return err
}

func addLeaf(out *[]Leaf, l Leaf) {
	for _, o := range *out {
		if o == l {
			return
		}
	}
	*out = append(*out, l)
}

// Events expands a request into raw PMC events: a basic counter gives every
// instance (or the one asked for), a derived counter its hardware leaves.
func (db *DB) Events(r Request) ([]aql.Event, error) {
	c, ok := db.byName[r.Name]
	if !ok {
		return nil, db.unknown(r.Name)
	}
	if r.Instance >= 0 && c.Kind != Basic {
		return nil, fmt.Errorf("counter %s: an instance [%d] can only be given for a hardware counter, %s is %s", r.Raw, r.Instance, r.Name, c.Kind)
	}
	leaves, err := db.Leaves(c)
	if err != nil {
		return nil, err
	}
	var evs []aql.Event
	for _, l := range leaves {
		b := l.Counter.block
		n := db.Device.InstanceExtent(b)
		lo, hi := 0, n
		if r.Instance >= 0 {
			if r.Instance >= n {
				return nil, fmt.Errorf("counter %s: %s has %d instances (0..%d)", r.Raw, b.Name, n, n-1)
			}
			lo, hi = r.Instance, r.Instance+1
		}
		for i := lo; i < hi; i++ {
			evs = append(evs, aql.Event{Block: b.ID, Index: uint32(i), EventID: l.Counter.Event, Flags: uint32(l.Accum)})
		}
	}
	return evs, nil
}

// Pass is one run of the application with its counters.
type Pass struct {
	Requests []Request
	Events   []aql.Event // deduplicated, in request order
}

// Plan splits requests into passes.
type Plan struct {
	Arch   string
	Passes []*Pass
}

// PMCLines renders the plan as rocprofv3 input-file lines, one "pmc:" line
// per pass.
func (p *Plan) PMCLines() string {
	var sb strings.Builder
	for _, ps := range p.Passes {
		sb.WriteString("pmc:")
		for _, r := range ps.Requests {
			sb.WriteString(" " + r.Raw)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// MultiPassError says a counter set cannot be collected in one pass; Plan
// holds a valid split.
type MultiPassError struct {
	Plan *Plan
}

func (e *MultiPassError) Error() string {
	return fmt.Sprintf("the counters do not fit in one pass on %s (each block has a fixed number of counter registers); "+
		"collect them in %d passes, e.g. with these input-file lines:\n%s", e.Plan.Arch, len(e.Plan.Passes), strings.TrimSuffix(e.Plan.PMCLines(), "\n"))
}

func mergeEvents(base, add []aql.Event) []aql.Event {
	out := append([]aql.Event(nil), base...)
	for _, e := range add {
		dup := false
		for _, o := range base {
			if o == e {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out
}

// PlanPasses fits requested counters into the fewest passes it finds (first
// fit in request order); each counter's hardware events stay in one pass.
// Requests qualified with another :device=N than device are skipped (device
// -1 keeps them all).
func (db *DB) PlanPasses(names []string, device int) (*Plan, error) {
	p := &Plan{Arch: db.Arch}
	for _, s := range names {
		r, err := db.ParseRequest(s)
		if err != nil {
			return nil, err
		}
		if r.Device >= 0 && device >= 0 && r.Device != device {
			continue
		}
		evs, err := db.Events(r)
		if err != nil {
			return nil, err
		}
		if err := db.Device.CheckEvents(evs); err != nil && len(evs) > 0 {
			var ce *aql.CapacityError
			if errors.As(err, &ce) {
				return nil, fmt.Errorf("counter %s alone needs more than the %d counters of %s instance %d, so it can never be collected on %s",
					r.Raw, ce.Limit, ce.Block, ce.Index, db.Arch)
			}
			return nil, fmt.Errorf("counter %s: %w", r.Raw, err)
		}
		placed := false
		for _, ps := range p.Passes {
			merged := mergeEvents(ps.Events, evs)
			if len(merged) == 0 || db.Device.CheckEvents(merged) == nil {
				ps.Events, ps.Requests, placed = merged, append(ps.Requests, r), true
				break
			}
		}
		if !placed {
			p.Passes = append(p.Passes, &Pass{Requests: []Request{r}, Events: evs})
		}
	}
	return p, nil
}

// Validate checks a requested counter set for one GPU: unknown names give an
// *UnknownCounterError (with the nearest name), a set that needs several
// passes gives a *MultiPassError whose message prints a valid split as
// "pmc:" lines; otherwise the single-pass plan is returned.
func (db *DB) Validate(names []string, device int) (*Plan, error) {
	p, err := db.PlanPasses(names, device)
	if err != nil {
		return nil, err
	}
	if len(p.Passes) > 1 {
		return p, &MultiPassError{Plan: p}
	}
	return p, nil
}

// Split separates requests this agent knows from unknown ones, as rocprofv3
// does for a pmc group: it warns about the missing names and collects the
// rest. Requests qualified for another device are left out of both.
func (db *DB) Split(names []string, device int) (known []string, missing []*UnknownCounterError, err error) {
	for _, s := range names {
		r, err := db.ParseRequest(s)
		if err != nil {
			return nil, nil, err
		}
		if r.Device >= 0 && device >= 0 && r.Device != device {
			continue
		}
		if _, ok := db.byName[r.Name]; ok {
			known = append(known, s)
			continue
		}
		var ue *UnknownCounterError
		if errors.As(db.unknown(r.Name), &ue) {
			missing = append(missing, ue)
		}
	}
	return known, missing, nil
}
