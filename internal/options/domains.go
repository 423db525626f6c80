package options

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// The domain options are the domain table's (internal/domain), not
// spec.go's: the table is the one place a domain is spelled. A switch's
// line (flag, alias, job key, help group and text, variable, readers) is
// its row; spec.go only places it among the options (domainOpt).

// domainOpt places the switch of the domain table's row id in the option
// table; withDomains writes it.
func domainOpt(id domain.ID) Spec { return Spec{domain: id} }

// domainFields are the configuration fields of the domains whose switch
// code reads as a field (c.KernelTrace.On()), by the row's ID: a row
// without one (a new domain) keeps its value by name (domainSwitch).
var domainFields = map[domain.ID]func(*Config) *Tri{
	domain.Kernel:           func(c *Config) *Tri { return &c.KernelTrace },
	domain.MemoryCopy:       func(c *Config) *Tri { return &c.MemoryCopyTrace },
	domain.MemoryAllocation: func(c *Config) *Tri { return &c.MemoryAllocationTrace },
	domain.ScratchMemory:    func(c *Config) *Tri { return &c.ScratchMemoryTrace },
	domain.HSACore:          func(c *Config) *Tri { return &c.HsaCoreTrace },
	domain.HSAAMD:           func(c *Config) *Tri { return &c.HsaAmdTrace },
	domain.HSAImage:         func(c *Config) *Tri { return &c.HsaImageTrace },
	domain.HSAFinalizer:     func(c *Config) *Tri { return &c.HsaFinalizerTrace },
	domain.ThreadTrace:      func(c *Config) *Tri { return &c.AdvancedThreadTrace },
	domain.HIPRuntime:       func(c *Config) *Tri { return &c.HipRuntimeTrace },
	domain.HIPCompiler:      func(c *Config) *Tri { return &c.HipCompilerTrace },
	domain.Marker:           func(c *Config) *Tri { return &c.MarkerTrace },
	domain.RCCL:             func(c *Config) *Tri { return &c.RcclTrace },
	domain.RocDecode:        func(c *Config) *Tri { return &c.RocdecodeTrace },
	domain.RocJPEG:          func(c *Config) *Tri { return &c.RocjpegTrace },
}

// withDomains completes the option table from the domain table: each row
// is a switch, written where spec.go places its ID or, for a row spec.go
// does not place (a new --*-trace switch), last in its help group, unless
// spec.go has a line for its option (one that takes a value: --pmc); each
// domain option gets its row's variable and readers.
func withDomains(lines []Spec) []Spec {
	specs := slices.Clone(lines)
	for _, d := range domain.Switches {
		i := -1
		if d.ID != 0 {
			i = slices.IndexFunc(specs, func(s Spec) bool { return s.domain == d.ID })
		}
		j := slices.IndexFunc(specs, func(s Spec) bool { return s.Dest == d.Option })
		switch {
		case j >= 0 && (i >= 0 || d.Help != ""):
			panic("options: the domain " + d.Option + "'s switch is its row's, not spec.go's")
		case j >= 0:
			i = j // an option with a value: spec.go's line
		case i >= 0:
			specs[i] = domainSwitch(d)
		default:
			specs = append(specs, domainSwitch(d))
			i = len(specs) - 1
		}
		if d.EnvDoc != "" {
			continue // the contract's own variable (domainVars)
		}
		if specs[i].Env != "" && specs[i].Env != d.Env {
			panic("options: " + d.Option + "'s variable is the domain table's, not " + specs[i].Env)
		}
		specs[i].Env, specs[i].ReadBy = d.Env, readers(d.ReadBy)
	}
	for _, s := range specs {
		if s.domain != 0 && s.Long == "" {
			panic("options: spec.go places a domain the domain table has no switch for")
		}
	}
	return specs
}

// domainSwitch is the [BOOL] option of a row with a help line.
func domainSwitch(d domain.Switch) Spec {
	group := d.Group
	if group == "" {
		group = gBasic
	}
	if !slices.Contains(Groups, group) {
		panic("options: the domain " + d.Option + "'s help group " + group + " is none of Groups")
	}
	field, dest := domainFields[d.ID], d.Option
	if d.ID == 0 || field == nil {
		field = func(c *Config) *Tri { return c.domainSwitch(dest) }
	}
	s := boolOpt(strings.TrimPrefix(d.Flag(), "--"), d.Short, dest, group, "", d.Help, field).alias(d.Alias)
	if d.Refused != "" {
		s = s.notSupported(d.Refused)
	}
	s.domain = d.ID
	return s
}

// readers converts the domain table's libraries to the contract's readers.
func readers(l domain.Library) Reader {
	var r Reader
	if l&domain.Preload != 0 {
		r |= ReadByPreload
	}
	if l&domain.Shim != 0 {
		r |= ReadByShim
	}
	return r
}

// domainVars are the contract's variables that the domain table names and
// that carry no option's value (ROCPROF_COUNTER_COLLECTION: 1 whenever the
// pass collects counters).
func domainVars() []ToolVar {
	var vars []ToolVar
	for _, d := range domain.Switches {
		if d.EnvDoc != "" {
			vars = append(vars, ToolVar{Name: d.Env, ReadBy: readers(d.ReadBy), Doc: d.EnvDoc})
		}
	}
	return vars
}

// domainEnv is the variable of the domain table's row id.
func domainEnv(id domain.ID) string {
	for _, d := range domain.Switches {
		if d.ID == id {
			return d.Env
		}
	}
	panic("options: no domain " + strconv.Itoa(int(id)))
}

// domainSwitch is the value of a domain switch that has no field of its own
// in Config (a domain the table adds without a line in spec.go).
func (c *Config) domainSwitch(dest string) *Tri {
	if c.switches == nil {
		c.switches = map[string]*Tri{}
	}
	t := c.switches[dest]
	if t == nil {
		t = new(Tri)
		c.switches[dest] = t
	}
	return t
}

// WithDomain adds a row to the domain table and its option to the option
// table, as a new row in internal/domain would at start-up, and returns the
// function that takes both out again: for tests that take a new domain
// through every consumer of the table.
func WithDomain(d domain.Switch) (remove func()) {
	removeRow := domain.Add(d)
	saved := Specs
	Specs = withDomains(specLines)
	return func() { Specs = saved; removeRow() }
}

// Collects reports whether the pass collects domain d.
func (c *Config) Collects(d domain.Switch) bool {
	switch d.ID {
	case domain.Counters: // --pmc, a pmc: line or an input file's pmc_groups
		return c.CollectsCounters()
	case domain.PCSampling:
		return c.PCSampling()
	}
	s, ok := SpecByDest(d.Option)
	if !ok {
		return false
	}
	t, _ := s.field(c).(*Tri)
	return t != nil && t.On()
}

// AskedByName reports whether the pass asked for domain d by its own option
// rather than through an aggregate (--sys-trace, --hip-trace, ...):
// counters and PC sampling have no aggregate.
func (c *Config) AskedByName(d domain.Switch) bool {
	if len(d.Aggregates) == 0 {
		return c.Collects(d)
	}
	return c.IsSet(d.Option)
}

// expandDomains switches on, for each domain, the unset options of the
// aggregates that imply it and are on.
func (c *Config) expandDomains() {
	for _, d := range domain.Switches {
		s, ok := SpecByDest(d.Option)
		if !ok {
			continue
		}
		t, _ := s.field(c).(*Tri)
		for _, a := range d.Aggregates {
			as, ok := SpecByDest(a)
			if !ok {
				panic("options: " + d.Option + "'s aggregate " + a + " is no option")
			}
			if on, _ := as.field(c).(*Tri); t != nil && on != nil && on.On() {
				t.setIfUnset(True)
			}
		}
	}
}
