package counters

import (
	"fmt"
	"strings"
)

// Node is a parsed derived-counter expression.
type Node interface{ String() string }

// NumNode is an integer literal (rocprofv3 converts numbers with atoi).
type NumNode struct{ Value float64 }

// RefNode references another counter (hardware, derived or constant).
type RefNode struct{ Name string }

// BinNode is a binary arithmetic operation.
type BinNode struct {
	Op   byte // + - * /
	L, R Node
}

// ReduceNode is reduce(X, op[, [dims]]).
type ReduceNode struct {
	X    Node
	Op   string
	Dims []string // nil: reduce everything to one value
}

// SelectNode is select(X, [DIM=[i,...], ...]).
type SelectNode struct {
	X   Node
	Sel []DimSelect
}

// DimSelect is one dimension's selected positions; Ranged marks "a:b" forms,
// which parse but do not evaluate (as in rocprofv3).
type DimSelect struct {
	Dim    string
	Index  []int
	Ranged bool
}

// AccumulateNode is accumulate(COUNTER, NONE|LOW_RES|HIGH_RES).
type AccumulateNode struct{ Name, Mode string }

func (n *NumNode) String() string { return fmt.Sprintf("%g", n.Value) }
func (n *RefNode) String() string { return n.Name }
func (n *BinNode) String() string { return "(" + n.L.String() + string(n.Op) + n.R.String() + ")" }
func (n *ReduceNode) String() string {
	if n.Dims == nil {
		return "reduce(" + n.X.String() + "," + n.Op + ")"
	}
	return "reduce(" + n.X.String() + "," + n.Op + ",[" + strings.Join(n.Dims, ",") + "])"
}
func (n *SelectNode) String() string {
	parts := make([]string, len(n.Sel))
	for i, s := range n.Sel {
		parts[i] = fmt.Sprintf("%s=%v", s.Dim, s.Index)
	}
	return "select(" + n.X.String() + ",[" + strings.Join(parts, ",") + "])"
}
func (n *AccumulateNode) String() string { return "accumulate(" + n.Name + "," + n.Mode + ")" }

// ParseError is a syntax error with its position in the expression.
type ParseError struct {
	Expr string
	Pos  int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("expression %q, column %d: %s", e.Expr, e.Pos+1, e.Msg)
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tName
	tPunct
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

func lex(src string) ([]token, error) {
	var out []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
				j++
			}
			out = append(out, token{tName, src[i:j], i})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if j < len(src) && src[j] == '.' {
				j++
				for j < len(src) && isDigit(src[j]) {
					j++
				}
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && isDigit(src[k]) {
					for k < len(src) && isDigit(src[k]) {
						k++
					}
					j = k
				}
			}
			out = append(out, token{tNum, src[i:j], i})
			i = j
		case strings.IndexByte("+-*/()[],=:", c) >= 0:
			out = append(out, token{tPunct, string(c), i})
			i++
		default:
			return nil, &ParseError{src, i, fmt.Sprintf("Mystery character %q", c)}
		}
	}
	return append(out, token{tEOF, "", len(src)}), nil
}

// atoi reproduces C atoi on a numeric token: leading digits only, so "0.5"
// is 0, "1e3" is 1 and ".5" is 0.
func atoi(s string) float64 {
	v := 0.0
	for i := 0; i < len(s) && isDigit(s[i]); i++ {
		v = v*10 + float64(s[i]-'0')
	}
	return v
}

type parser struct {
	src  string
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) errf(t token, format string, a ...any) error {
	return &ParseError{p.src, t.pos, fmt.Sprintf(format, a...)}
}

func (p *parser) expect(s string) error {
	t := p.next()
	if t.kind != tPunct || t.text != s {
		if t.kind == tEOF {
			return p.errf(t, "expected %q, found end of expression", s)
		}
		return p.errf(t, "expected %q, found %q", s, t.text)
	}
	return nil
}

func (p *parser) name() (string, error) {
	t := p.next()
	if t.kind != tName {
		return "", p.errf(t, "expected a name, found %q", t.text)
	}
	return t.text, nil
}

// Parse parses a derived-counter expression.
func Parse(src string) (Node, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errf(t, "unexpected %q", t.text)
	}
	return n, nil
}

func (p *parser) sum() (Node, error) { return p.binaryLevel("+-", p.product) }

func (p *parser) product() (Node, error) { return p.binaryLevel("*/", p.primary) }

// binaryLevel parses a left-associative chain of operand (op operand)* for
// one precedence level whose operators are the bytes of ops.
func (p *parser) binaryLevel(ops string, operand func() (Node, error)) (Node, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tPunct || len(t.text) != 1 || !strings.Contains(ops, t.text) {
			return l, nil
		}
		p.i++
		r, err := operand()
		if err != nil {
			return nil, err
		}
		l = &BinNode{Op: t.text[0], L: l, R: r}
	}
}

func (p *parser) primary() (Node, error) {
	t := p.next()
	switch {
	case t.kind == tNum:
		return &NumNode{Value: atoi(t.text)}, nil
	case t.kind == tPunct && t.text == "(":
		n, err := p.sum()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	case t.kind == tName && t.text == "reduce" && p.peekIs("("):
		return p.reduce()
	case t.kind == tName && t.text == "select" && p.peekIs("("):
		return p.selectExpr()
	case t.kind == tName && t.text == "accumulate" && p.peekIs("("):
		return p.accumulate()
	case t.kind == tName:
		return &RefNode{Name: t.text}, nil
	case t.kind == tEOF:
		return nil, p.errf(t, "unexpected end of expression")
	}
	return nil, p.errf(t, "unexpected %q", t.text)
}

func (p *parser) peekIs(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.text == s
}

func (p *parser) reduce() (Node, error) {
	p.i++ // (
	x, err := p.sum()
	if err != nil {
		return nil, err
	}
	if err := p.expect(","); err != nil {
		return nil, err
	}
	op, err := p.name()
	if err != nil {
		return nil, err
	}
	n := &ReduceNode{X: x, Op: op}
	if p.peekIs(",") {
		p.i++
		if err := p.expect("["); err != nil {
			return nil, err
		}
		n.Dims = []string{}
		for {
			d, err := p.name()
			if err != nil {
				return nil, err
			}
			n.Dims = append(n.Dims, d)
			if !p.peekIs(",") {
				break
			}
			p.i++
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
	}
	return n, p.expect(")")
}

func (p *parser) number() (int, error) {
	t := p.next()
	if t.kind != tNum {
		return 0, p.errf(t, "expected a number, found %q", t.text)
	}
	return int(atoi(t.text)), nil
}

func (p *parser) selectExpr() (Node, error) {
	p.i++ // (
	x, err := p.sum()
	if err != nil {
		return nil, err
	}
	if err := p.expect(","); err != nil {
		return nil, err
	}
	if err := p.expect("["); err != nil {
		return nil, err
	}
	n := &SelectNode{X: x}
	for {
		d, err := p.name()
		if err != nil {
			return nil, err
		}
		if err := p.expect("="); err != nil {
			return nil, err
		}
		if err := p.expect("["); err != nil {
			return nil, err
		}
		ds := DimSelect{Dim: d}
		for {
			a, err := p.number()
			if err != nil {
				return nil, err
			}
			ds.Index = append(ds.Index, a)
			if p.peekIs(":") {
				p.i++
				b, err := p.number()
				if err != nil {
					return nil, err
				}
				ds.Ranged = true
				ds.Index = append(ds.Index, b)
			}
			if !p.peekIs(",") {
				break
			}
			p.i++
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		n.Sel = append(n.Sel, ds)
		if !p.peekIs(",") {
			break
		}
		p.i++
	}
	if err := p.expect("]"); err != nil {
		return nil, err
	}
	return n, p.expect(")")
}

func (p *parser) accumulate() (Node, error) {
	p.i++ // (
	c, err := p.name()
	if err != nil {
		return nil, err
	}
	if err := p.expect(","); err != nil {
		return nil, err
	}
	mt := p.peek()
	m, err := p.name()
	if err != nil {
		return nil, err
	}
	switch m {
	case "NONE", "LOW_RES", "HIGH_RES":
	default:
		return nil, p.errf(mt, "accumulate mode must be NONE, LOW_RES or HIGH_RES, not %q", m)
	}
	return &AccumulateNode{Name: c, Mode: m}, p.expect(")")
}

// Walk calls fn for n and every node below it, depth first, left to right.
func Walk(n Node, fn func(Node)) {
	fn(n)
	switch x := n.(type) {
	case *BinNode:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *ReduceNode:
		Walk(x.X, fn)
	case *SelectNode:
		Walk(x.X, fn)
	}
}
