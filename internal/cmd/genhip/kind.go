package main

import "strings"

// Argument kinds: how the output side prints an argument's bytes.
const (
	kindPtr    = "ptr"    // address, hex
	kindInt    = "int"    // signed integer
	kindUint   = "uint"   // unsigned integer
	kindFloat  = "float"  // IEEE float or double
	kindBool   = "bool"   // C bool
	kindStruct = "struct" // a struct passed by value: its bytes
)

// typedefs maps a typedef name to the tokens it stands for; a name defined
// with a body maps to "{}" ("{float}" when the body holds a floating-point
// member; "int" for an enum). Struct tags are recorded as "struct TAG".
type typedefs map[string][]string

// Markers of a type defined with a body (kindOf classifies them as structs).
const (
	bodyPlain     = "{}"
	bodyWithFloat = "{float}"
)

// defineBody records a struct or union body under name.
func (t typedefs) defineBody(name string, body []string) {
	for _, w := range body {
		if w == "float" || w == "double" || t.hasFloat(w) {
			t[name] = []string{bodyWithFloat}
			return
		}
	}
	t[name] = []string{bodyPlain}
}

// hasFloat reports whether a struct type holds a floating-point member.
func (t typedefs) hasFloat(typ string) bool {
	return t.hasFloatToks(tokenize(typ), 0)
}

func (t typedefs) hasFloatToks(toks []string, depth int) bool {
	var words []string
	for _, w := range toks {
		if w != "const" && w != "volatile" {
			words = append(words, w)
		}
	}
	if depth > 16 || len(words) == 0 || len(words) > 2 {
		return false
	}
	key := words[0]
	if len(words) == 2 {
		if words[0] != "struct" && words[0] != "union" {
			return false
		}
		key = "struct " + words[1]
	}
	under, ok := t[key]
	switch {
	case !ok:
		return false
	case len(under) == 1 && (under[0] == bodyPlain || under[0] == bodyWithFloat):
		return under[0] == bodyWithFloat
	}
	return t.hasFloatToks(under, depth+1)
}

// add records one typedef statement (without the leading "typedef").
func (t typedefs) add(st []string) {
	if len(st) < 2 {
		return
	}
	// Function pointer: R (*name)(...)
	for i := 0; i+3 < len(st); i++ {
		if st[i] == "(" && st[i+1] == "*" && isIdent(st[i+2]) && st[i+3] == ")" {
			t[st[i+2]] = []string{"*"}
			return
		}
	}
	name := st[len(st)-1]
	if !isIdent(name) {
		return
	}
	under := st[:len(st)-1]
	if i := indexOf(under, "{"); i >= 0 {
		// A definition: what matters is whether it is an enum, and whether
		// a struct holds floats.
		if under[0] == "enum" {
			t[name] = []string{"int"}
			return
		}
		t.defineBody(name, under[i:])
		if i == 2 && (under[0] == "struct" || under[0] == "union") {
			t.defineBody("struct "+under[1], under[i:])
		}
		return
	}
	t[name] = under
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

var intWords = map[string]bool{"int": true, "long": true, "short": true, "char": true,
	"signed": true, "int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true,
	"ssize_t": true, "intptr_t": true, "ptrdiff_t": true}

var uintWords = map[string]bool{"unsigned": true, "size_t": true, "uint8_t": true,
	"uint16_t": true, "uint32_t": true, "uint64_t": true, "uintptr_t": true}

// kind classifies a parameter type, following typedefs.
func (t typedefs) kind(typ string) string {
	return t.kindOf(tokenize(typ), 0)
}

func (t typedefs) kindOf(toks []string, depth int) string {
	if indexOf(toks, "*") >= 0 || indexOf(toks, "(") >= 0 || indexOf(toks, "[") >= 0 {
		return kindPtr
	}
	var words []string
	for _, w := range toks {
		if w != "const" && w != "volatile" {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return kindStruct
	}
	switch {
	case words[0] == "enum":
		return kindInt
	case words[0] == "struct" || words[0] == "union":
		return kindStruct
	case indexOf(words, "float") >= 0 || indexOf(words, "double") >= 0:
		return kindFloat
	case words[0] == "bool" || words[0] == "_Bool":
		return kindBool
	}
	for _, w := range words {
		if uintWords[w] {
			return kindUint
		}
	}
	for _, w := range words {
		if intWords[w] {
			return kindInt
		}
	}
	if len(words) == 1 && depth < 16 {
		if under, ok := t[words[0]]; ok {
			return t.kindOf(under, depth+1)
		}
	}
	if strings.HasSuffix(words[len(words)-1], "_t") && len(words) == 1 {
		return kindStruct // an opaque typedef we could not resolve: keep its bytes
	}
	return kindStruct
}
