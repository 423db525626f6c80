package counters

import (
	"fmt"
	"math"
)

// Position packs a record's coordinate in every dimension, 8 bits each,
// indexed by Dimension.
type Position uint64

// Get is the coordinate in d.
func (p Position) Get(d Dimension) int { return int(p >> (8 * d) & 0xFF) }

// With sets the coordinate in d.
func (p Position) With(d Dimension, v int) Position {
	return p&^(0xFF<<(8*d)) | Position(v&0xFF)<<(8*d)
}

func dimMask(ds []Dimension) Position {
	var m Position
	for _, d := range ds {
		m |= 0xFF << (8 * d)
	}
	return m
}

// Record is one value of a counter at one position.
type Record struct {
	Pos   Position
	Value float64
}

// Inputs holds collected basic-counter records by InputKey.
type Inputs map[string][]Record

// InputKey names the records of a basic counter; accumulated reads (collected
// with the SQ accumulate flag) are distinct from plain ones.
func InputKey(name string, accum string) string {
	if accum == "" || accum == "NONE" {
		return name
	}
	return name + "@" + accum
}

// EvalError is an evaluation failure of a counter.
type EvalError struct {
	Counter string
	Msg     string
}

func (e *EvalError) Error() string { return "evaluating " + e.Counter + ": " + e.Msg }

// Evaluate computes a counter from collected basic records, with rocprofv3's
// semantics: the longer operand is always the left one, a one-record operand
// is broadcast, division by zero gives 0.
func (db *DB) Evaluate(c *Counter, in Inputs) ([]Record, error) {
	ev := evaluator{db: db, in: in, top: c.Name}
	ev.scratch = ev.arena[:0]
	r, err := ev.counter(c, 0)
	if err != nil {
		return nil, err
	}
	// Intermediate results live in the evaluator's arena (one allocation per
	// evaluation instead of one per node); the result gets its own copy.
	return append([]Record(nil), r...), nil
}

type evaluator struct {
	db      *DB
	in      Inputs
	top     string
	arena   [16]Record
	scratch []Record
}

// alloc returns n records from the arena, or from the heap when it is full.
func (ev *evaluator) alloc(n int) []Record {
	if len(ev.scratch)+n > cap(ev.scratch) {
		return make([]Record, n)
	}
	r := ev.scratch[len(ev.scratch) : len(ev.scratch)+n : len(ev.scratch)+n]
	ev.scratch = ev.scratch[:len(ev.scratch)+n]
	return r
}

func (ev *evaluator) one(v float64) []Record {
	r := ev.alloc(1)
	r[0] = Record{Value: v}
	return r
}

const maxDepth = 64

func (ev *evaluator) fail(format string, a ...any) error {
	return &EvalError{Counter: ev.top, Msg: fmt.Sprintf(format, a...)}
}

func (ev *evaluator) counter(c *Counter, depth int) ([]Record, error) {
	if depth > maxDepth {
		return nil, ev.fail("counter definitions nest deeper than %d (a cycle through %s?)", maxDepth, c.Name)
	}
	switch c.Kind {
	case Constant:
		return ev.one(ev.db.Props[c.Name]), nil
	case Basic:
		r, ok := ev.in[c.Name]
		if !ok {
			return nil, ev.fail("no collected data for %s", c.Name)
		}
		return r, nil
	}
	return ev.node(c.Expr, depth+1)
}

func (ev *evaluator) node(n Node, depth int) ([]Record, error) {
	switch x := n.(type) {
	case *NumNode:
		return ev.one(x.Value), nil
	case *RefNode:
		c, ok := ev.db.byName[x.Name]
		if !ok {
			return nil, ev.db.unknown(x.Name)
		}
		return ev.counter(c, depth)
	case *AccumulateNode:
		c, ok := ev.db.byName[x.Name]
		if !ok {
			return nil, ev.db.unknown(x.Name)
		}
		if c.Kind != Basic {
			return ev.counter(c, depth)
		}
		r, ok := ev.in[InputKey(x.Name, x.Mode)]
		if !ok {
			return nil, ev.fail("no collected data for accumulate(%s,%s)", x.Name, x.Mode)
		}
		return r, nil
	case *BinNode:
		a, err := ev.node(x.L, depth)
		if err != nil {
			return nil, err
		}
		b, err := ev.node(x.R, depth)
		if err != nil {
			return nil, err
		}
		return ev.binary(x.Op, a, b)
	case *ReduceNode:
		a, err := ev.node(x.X, depth)
		if err != nil {
			return nil, err
		}
		return ev.reduce(x, a)
	case *SelectNode:
		a, err := ev.node(x.X, depth)
		if err != nil {
			return nil, err
		}
		return ev.sel(x, a)
	}
	return nil, ev.fail("unknown expression node %T", n)
}

func apply(op byte, a, b float64) float64 {
	switch op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	}
	if b == 0 {
		return 0
	}
	return a / b
}

func (ev *evaluator) binary(op byte, a, b []Record) ([]Record, error) {
	if len(a) < len(b) {
		// rocprofv3 always treats the longer vector as the left operand, so
		// scalar-vector is computed as vector-scalar (and likewise for /).
		a, b = b, a
	}
	out := ev.alloc(len(a))
	switch {
	case len(b) == 1:
		v := b[0].Value
		for i, r := range a {
			out[i] = Record{r.Pos, apply(op, r.Value, v)}
		}
	case len(a) == len(b):
		for i, r := range a {
			out[i] = Record{r.Pos, apply(op, r.Value, b[i].Value)}
		}
	default:
		return nil, ev.fail("Mismatched Sizes (%d and %d records)", len(a), len(b))
	}
	return out, nil
}

func (ev *evaluator) reduce(x *ReduceNode, a []Record) ([]Record, error) {
	switch x.Op {
	case "sum", "avr", "min", "max":
	default:
		return nil, ev.fail("Invalid Second argument to reduce(): %q (use sum, avr, min or max)", x.Op)
	}
	if x.Dims == nil {
		// Everything collapses into one value: no grouping needed.
		if len(a) == 0 {
			return nil, nil
		}
		v := a[0].Value
		for _, r := range a[1:] {
			switch x.Op {
			case "sum", "avr":
				v += r.Value
			case "min":
				v = math.Min(v, r.Value)
			case "max":
				v = math.Max(v, r.Value)
			}
		}
		if x.Op == "avr" {
			v /= float64(len(a))
		}
		return ev.one(v), nil
	}
	var mask Position
	{
		ds, err := parseDims(x.Dims)
		if err != nil {
			return nil, ev.fail("%v", err)
		}
		mask = dimMask(ds)
	}
	if len(a) == 0 {
		return nil, nil
	}
	out := make([]Record, 0, 1)
	counts := make([]int, 0, 1)
	for _, r := range a {
		key := r.Pos &^ mask
		g := -1
		for i := range out {
			if out[i].Pos == key {
				g = i
				break
			}
		}
		if g < 0 {
			out = append(out, Record{Pos: key, Value: r.Value})
			counts = append(counts, 1)
			continue
		}
		counts[g]++
		switch x.Op {
		case "sum", "avr":
			out[g].Value += r.Value
		case "min":
			out[g].Value = math.Min(out[g].Value, r.Value)
		case "max":
			out[g].Value = math.Max(out[g].Value, r.Value)
		}
	}
	if x.Op == "avr" {
		for i := range out {
			out[i].Value /= float64(counts[i])
		}
	}
	return out, nil
}

func (ev *evaluator) sel(x *SelectNode, a []Record) ([]Record, error) {
	type want struct {
		d   Dimension
		set map[int]bool
	}
	ws := make([]want, len(x.Sel))
	var drop []Dimension
	for i, s := range x.Sel {
		if s.Ranged {
			return nil, ev.fail("Range based selection not supported")
		}
		d, err := ParseDimension(s.Dim)
		if err != nil {
			return nil, ev.fail("%v", err)
		}
		ws[i] = want{d, map[int]bool{}}
		for _, v := range s.Index {
			ws[i].set[v] = true
		}
		drop = append(drop, d)
	}
	mask := dimMask(drop)
	var out []Record
	for _, r := range a {
		ok := true
		for _, w := range ws {
			if !w.set[r.Pos.Get(w.d)] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, Record{r.Pos &^ mask, r.Value})
		}
	}
	return out, nil
}
