package options

import (
	"slices"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// The domain options' variables, who reads them and which aggregates switch
// them on are the domain table's (internal/domain), not spec.go's: the
// table is the one place a domain is spelled.

// withDomains completes the option table from the domain table: each
// domain's option gets its variable and readers, and a domain whose option
// spec.go does not write (a new --*-trace switch) gets one of its own, a
// basic tracing option kept in the configuration by name.
func withDomains(specs []Spec) []Spec {
	for _, d := range domain.Switches {
		i := slices.IndexFunc(specs, func(s Spec) bool { return s.Dest == d.Option })
		if i < 0 {
			dest := d.Option
			specs = append(specs, boolOpt(strings.TrimPrefix(d.Flag(), "--"), "", dest, gBasic, "", d.Help,
				func(c *Config) *Tri { return c.domainSwitch(dest) }))
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
	return specs
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

// domainEnv is the variable of the domain its option (destination) asks
// for.
func domainEnv(option string) string {
	d, ok := domain.ByOption(option)
	if !ok {
		panic("options: no domain " + option)
	}
	return d.Env
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
	Specs = withDomains(slices.Clone(Specs))
	return func() { Specs = saved; removeRow() }
}

// Collects reports whether the pass collects domain d.
func (c *Config) Collects(d domain.Switch) bool {
	switch d.Option {
	case "pmc": // --pmc, a pmc: line or an input file's pmc_groups
		return c.CollectsCounters()
	case "pc_sampling_method":
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
