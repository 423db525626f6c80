package counters

import (
	"fmt"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

// Dimension is rocprofiler-sdk's counter dimension.
type Dimension uint8

// Dimensions, in rocprofiler-sdk's enum order.
const (
	DimNone Dimension = iota
	DimXCC
	DimAID
	DimShaderEngine
	DimAgent
	DimShaderArray
	DimWGP
	DimInstance
	numDims
)

var dimensionNames = [...]string{"DIMENSION_NONE", "DIMENSION_XCC", "DIMENSION_AID", "DIMENSION_SHADER_ENGINE",
	"DIMENSION_AGENT", "DIMENSION_SHADER_ARRAY", "DIMENSION_WGP", "DIMENSION_INSTANCE"}

func (d Dimension) String() string {
	if int(d) < len(dimensionNames) {
		return dimensionNames[d]
	}
	return fmt.Sprintf("DIMENSION_%d", d)
}

// ParseDimension accepts "DIMENSION_SHADER_ENGINE" or the short
// "SHADER_ENGINE".
func ParseDimension(s string) (Dimension, error) {
	u := strings.ToUpper(s)
	for i, n := range dimensionNames {
		if i > 0 && (u == n || "DIMENSION_"+u == n) {
			return Dimension(i), nil
		}
	}
	return 0, fmt.Errorf("unknown dimension %q (known: %s)", s, strings.Join(dimensionNames[1:], ", "))
}

// fromAQL maps AQLprofile's dimension ids onto rocprofiler-sdk's.
var fromAQL = map[aql.DimID]Dimension{aql.DimXCD: DimXCC, aql.DimAID: DimAID, aql.DimSE: DimShaderEngine,
	aql.DimSA: DimShaderArray, aql.DimWGP: DimWGP, aql.DimInstance: DimInstance}

// FromAQLDim converts an AQLprofile dimension id.
func FromAQLDim(d aql.DimID) Dimension { return fromAQL[d] }

// DimExtent is a dimension with its size.
type DimExtent struct {
	Dim  Dimension
	Size int
}

func (e DimExtent) String() string { return fmt.Sprintf("%s[0:%d]", e.Dim, e.Size-1) }

var scalarDims = []DimExtent{{DimInstance, 1}}

func sameDims(a, b []DimExtent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func withoutDims(in []DimExtent, drop []Dimension) []DimExtent {
	out := make([]DimExtent, 0, len(in))
	for _, e := range in {
		keep := true
		for _, d := range drop {
			if e.Dim == d {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return scalarDims
	}
	return out
}

// Dimensions is a counter's dimension list on this agent (what --list-avail
// prints): the block's for basic counters, propagated through expressions for
// derived ones, INSTANCE[1] for constants.
func (db *DB) Dimensions(c *Counter) ([]DimExtent, error) {
	return db.dims(c, map[string]bool{})
}

func (db *DB) dims(c *Counter, busy map[string]bool) ([]DimExtent, error) {
	switch c.Kind {
	case Constant:
		return scalarDims, nil
	case Basic:
		var out []DimExtent
		for _, d := range db.Device.Dimensions(c.block) {
			out = append(out, DimExtent{fromAQL[d.ID], d.Extent})
		}
		return out, nil
	}
	if busy[c.Name] {
		return nil, fmt.Errorf("counter %s is defined in terms of itself", c.Name)
	}
	busy[c.Name] = true
	defer delete(busy, c.Name)
	return db.nodeDims(c.Expr, busy)
}

func (db *DB) ref(name string) (*Counter, error) {
	c, ok := db.byName[name]
	if !ok {
		return nil, db.unknown(name)
	}
	return c, nil
}

func (db *DB) nodeDims(n Node, busy map[string]bool) ([]DimExtent, error) {
	switch x := n.(type) {
	case *NumNode:
		return scalarDims, nil
	case *RefNode:
		c, err := db.ref(x.Name)
		if err != nil {
			return nil, err
		}
		return db.dims(c, busy)
	case *AccumulateNode:
		c, err := db.ref(x.Name)
		if err != nil {
			return nil, err
		}
		return db.dims(c, busy)
	case *BinNode:
		l, err := db.nodeDims(x.L, busy)
		if err != nil {
			return nil, err
		}
		r, err := db.nodeDims(x.R, busy)
		if err != nil {
			return nil, err
		}
		if len(l) > 1 && len(r) > 1 && !sameDims(l, r) {
			return nil, fmt.Errorf("%s: operands have different dimensions (%v and %v)", x, l, r)
		}
		if len(r) > len(l) {
			return r, nil
		}
		return l, nil
	case *ReduceNode:
		in, err := db.nodeDims(x.X, busy)
		if err != nil {
			return nil, err
		}
		if x.Dims == nil {
			return scalarDims, nil
		}
		drop, err := parseDims(x.Dims)
		if err != nil {
			return nil, err
		}
		return withoutDims(in, drop), nil
	case *SelectNode:
		in, err := db.nodeDims(x.X, busy)
		if err != nil {
			return nil, err
		}
		var drop []Dimension
		for _, s := range x.Sel {
			d, err := ParseDimension(s.Dim)
			if err != nil {
				return nil, err
			}
			drop = append(drop, d)
		}
		return withoutDims(in, drop), nil
	}
	return nil, fmt.Errorf("unknown expression node %T", n)
}

func parseDims(names []string) ([]Dimension, error) {
	out := make([]Dimension, len(names))
	for i, n := range names {
		d, err := ParseDimension(n)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}
