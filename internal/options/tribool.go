package options

import (
	"fmt"
	"strings"
)

// Tri is a rocprofv3 [BOOL] option value: unset, true or false. Unset matters
// because aggregate options only switch on sub-options that are still unset.
type Tri int8

// The three states of a [BOOL] option.
const (
	Unset Tri = iota
	True
	False
)

// TriOf converts a plain bool.
func TriOf(b bool) Tri {
	if b {
		return True
	}
	return False
}

// On reports whether the option is set to true.
func (t Tri) On() bool { return t == True }

// IsSet reports whether the option was given a value.
func (t Tri) IsSet() bool { return t != Unset }

// String renders the value as rocprof-go prints it in --echo and config dumps.
func (t Tri) String() string {
	switch t {
	case True:
		return "true"
	case False:
		return "false"
	}
	return "unset"
}

var truthWords = map[string]Tri{
	"y": True, "yes": True, "t": True, "true": True, "on": True, "1": True,
	"n": False, "no": False, "f": False, "false": False, "off": False, "0": False,
}

// ParseTri parses rocprofv3's truth words (case-insensitive).
func ParseTri(s string) (Tri, error) {
	if v, ok := truthWords[strings.ToLower(strings.TrimSpace(s))]; ok {
		return v, nil
	}
	return Unset, fmt.Errorf("invalid truth value %q (use one of y yes t true on 1 / n no f false off 0)", s)
}

// IsTruthWord reports whether s is one of the words ParseTri accepts.
func IsTruthWord(s string) bool {
	_, ok := truthWords[strings.ToLower(s)]
	return ok
}

// setIfUnset implements rocprofv3's "set if none" rule for aggregates.
func (t *Tri) setIfUnset(v Tri) {
	if *t == Unset {
		*t = v
	}
}
