package counters

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"

	"go.yaml.in/yaml/v3"

	gpudata "github.com/rocprof-go/rocprof-go/configs/gpu"
	"github.com/rocprof-go/rocprof-go/internal/aql"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// Kind says how a counter's value is obtained.
type Kind int

// Counter kinds.
const (
	Basic    Kind = iota // a hardware block event
	Derived              // an expression over other counters
	Constant             // an agent property
)

func (k Kind) String() string { return [...]string{"basic", "derived", "constant"}[k] }

// Counter is one counter as an architecture sees it.
type Counter struct {
	Name        string
	Description string
	Kind        Kind
	Block       string // Basic
	Event       uint32 // Basic
	Expression  string // Derived
	Expr        Node   // Derived, parsed

	block *aql.Block
}

// Definition is one entry of a counter file (counter_defs.yaml schema).
type Definition struct {
	Archs      []string `json:"archs" yaml:"architectures"`
	Block      string   `json:"block" yaml:"block"`
	Event      *int     `json:"event" yaml:"event"`
	Expression string   `json:"expression" yaml:"expression"`
}

// FileCounter is one counter of a counter file.
type FileCounter struct {
	Name        string       `json:"name" yaml:"name"`
	Description string       `json:"description" yaml:"description"`
	Defs        []Definition `json:"defs" yaml:"definitions"`
}

var builtin struct {
	once     sync.Once
	counters []FileCounter
	err      error
}

func builtinCounters() ([]FileCounter, error) {
	builtin.once.Do(func() {
		raw, err := gpudata.Files.ReadFile("counters.json")
		if err != nil {
			builtin.err = err
			return
		}
		var f struct {
			Counters []FileCounter `json:"counters"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			builtin.err = fmt.Errorf("configs/gpu/counters.json: %w", err)
			return
		}
		builtin.counters = f.Counters
	})
	return builtin.counters, builtin.err
}

// ArchKeys lists every architecture key the built-in definitions name, sorted.
func ArchKeys() ([]string, error) {
	cs, err := builtinCounters()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, c := range cs {
		for _, d := range c.Defs {
			for _, a := range d.Archs {
				seen[a] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out, nil
}

// ParseExtraFile reads a -E extra counter file: rocprofiler-sdk's schema,
// `rocprofiler-sdk: {counters-schema-version: 1, counters: [...]}`.
func ParseExtraFile(path string) ([]FileCounter, error) {
	raw, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("extra counter file: %w", err)
	}
	cs, err := ParseExtra(raw)
	if err != nil {
		return nil, fmt.Errorf("extra counter file %s: %w", path, err)
	}
	return cs, nil
}

// ParseExtra parses extra counter definitions from YAML.
func ParseExtra(raw []byte) ([]FileCounter, error) {
	var f struct {
		SDK *struct {
			Version  int           `yaml:"counters-schema-version"`
			Counters []FileCounter `yaml:"counters"`
		} `yaml:"rocprofiler-sdk"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	if f.SDK == nil {
		return nil, fmt.Errorf("no top-level \"rocprofiler-sdk\" key (expected rocprofiler-sdk: {counters-schema-version: 1, counters: [...]})")
	}
	if f.SDK.Version != 0 && f.SDK.Version != 1 {
		return nil, fmt.Errorf("counters-schema-version %d is not supported (only 1)", f.SDK.Version)
	}
	for i, c := range f.SDK.Counters {
		if c.Name == "" {
			return nil, fmt.Errorf("counter %d has no name", i)
		}
		if len(c.Defs) == 0 {
			return nil, fmt.Errorf("counter %s has no definitions", c.Name)
		}
		for j, d := range c.Defs {
			basic := d.Block != "" || d.Event != nil
			if basic == (d.Expression != "") || basic && (d.Block == "" || d.Event == nil) {
				return nil, fmt.Errorf("counter %s definition %d: give either block and event, or expression", c.Name, j)
			}
			if len(d.Archs) == 0 {
				return nil, fmt.Errorf("counter %s definition %d: no architectures", c.Name, j)
			}
			if d.Expression != "" {
				if _, err := Parse(d.Expression); err != nil {
					return nil, fmt.Errorf("counter %s: %w", c.Name, err)
				}
			}
		}
	}
	return f.SDK.Counters, nil
}

// DB is the counter database of one agent.
type DB struct {
	Device   *aql.Device
	Arch     string     // the architecture key counters are matched with (exact agent name)
	Counters []*Counter // listing order: constants, then Definition order
	Props    Properties

	byName map[string]*Counter
}

// Option configures Load.
type Option func(*loadOptions) error

type loadOptions struct {
	base  []FileCounter // nil: the built-in definitions
	extra []FileCounter
	props Properties
}

// DefinitionsFileName is the file rocprofiler-sdk reads its counter
// definitions from, in $ROCPROFILER_METRICS_PATH when that is set.
const DefinitionsFileName = "counter_defs.yaml"

// WithDefinitions replaces the built-in definitions, as
// $ROCPROFILER_METRICS_PATH/counter_defs.yaml replaces rocprofiler-sdk's own
// file: only these counters (and the agent constants) exist, and extra
// definitions (WithExtra) are added to them.
func WithDefinitions(cs []FileCounter) Option {
	return func(o *loadOptions) error {
		if cs == nil {
			cs = []FileCounter{}
		}
		o.base = cs
		return nil
	}
}

// WithDefinitionsFile is WithDefinitions for a counter_defs.yaml file.
func WithDefinitionsFile(path string) Option {
	return func(o *loadOptions) error {
		cs, err := ParseDefinitionsFile(path)
		if err != nil {
			return err
		}
		return WithDefinitions(cs)(o)
	}
}

// ParseDefinitionsFile reads a counter definitions file that replaces the
// built-in one (rocprofiler-sdk's counter_defs.yaml schema, as ParseExtra).
func ParseDefinitionsFile(path string) ([]FileCounter, error) {
	raw, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("counter definitions: %w", err)
	}
	cs, err := ParseExtra(raw)
	if err != nil {
		return nil, fmt.Errorf("counter definitions %s: %w", path, err)
	}
	return cs, nil
}

// WithExtra appends extra counter definitions (rocprofv3 -E), after the
// built-in ones; an extra Definition of an existing name replaces it.
func WithExtra(cs []FileCounter) Option {
	return func(o *loadOptions) error { o.extra = append(o.extra, cs...); return nil }
}

// WithExtraFile is WithExtra for a YAML file.
func WithExtraFile(path string) Option {
	return func(o *loadOptions) error {
		cs, err := ParseExtraFile(path)
		if err != nil {
			return err
		}
		o.extra = append(o.extra, cs...)
		return nil
	}
}

// WithProperties sets the agent properties the constants read (KFD topology
// values); missing ones are derived from the device description.
func WithProperties(p Properties) Option {
	return func(o *loadOptions) error { o.props = p; return nil }
}

// Load builds the counter database of a device. Counters are matched on the
// exact agent name (dev.GfxIP), as rocprofiler-sdk does.
func Load(dev *aql.Device, opts ...Option) (*DB, error) {
	var o loadOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	base := o.base
	if base == nil {
		var err error
		if base, err = builtinCounters(); err != nil {
			return nil, err
		}
	}
	var err error
	db := &DB{Device: dev, Arch: dev.GfxIP, byName: map[string]*Counter{}}
	db.Props = DeriveProperties(dev, o.props)
	for _, name := range ConstantNames {
		c := &Counter{Name: name, Kind: Constant, Description: "Constant value " + name + " from agent properties"}
		db.Counters = append(db.Counters, c)
		db.byName[name] = c
	}
	add := func(fc FileCounter) error {
		for _, d := range fc.Defs {
			if !contains(d.Archs, db.Arch) {
				continue
			}
			c := &Counter{Name: fc.Name, Description: fc.Description}
			if d.Expression != "" {
				c.Kind, c.Expression = Derived, d.Expression
				if c.Expr, err = Parse(d.Expression); err != nil {
					return fmt.Errorf("counter %s: %w", fc.Name, err)
				}
			} else {
				if d.Event == nil || *d.Event < 0 {
					return fmt.Errorf("counter %s: block %s has no valid event", fc.Name, d.Block)
				}
				c.Kind, c.Block, c.Event = Basic, d.Block, uint32(*d.Event)
				b, ok := dev.Table.BlockByName(d.Block)
				if !ok {
					// The block is absent from this architecture's table:
					// AQLprofile could not collect it, so it is not offered.
					return nil
				}
				c.block = b
			}
			if old, ok := db.byName[c.Name]; ok {
				*old = *c
			} else {
				db.Counters = append(db.Counters, c)
				db.byName[c.Name] = c
			}
			return nil
		}
		return nil
	}
	for _, fc := range base {
		if err := add(fc); err != nil {
			return nil, err
		}
	}
	for _, fc := range o.extra {
		if err := add(fc); err != nil {
			return nil, fmt.Errorf("extra counters: %w", err)
		}
	}
	return db, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Lookup finds a counter by exact name.
func (db *DB) Lookup(name string) (*Counter, bool) { c, ok := db.byName[name]; return c, ok }

// readFile reads a counter file the user named; a FIFO or device is
// refused, naming it, instead of blocking the run on it.
func readFile(path string) ([]byte, error) {
	f, err := atomicfile.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
