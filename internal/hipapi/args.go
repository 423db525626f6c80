package hipapi

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Param is one parameter of a HIP function, from the installed headers.
type Param struct {
	Type string // C type as declared, e.g. "void**", "hipStream_t"
	Name string // as declared, or argN when the header gives none
	Kind string // ptr, int, uint, float, bool or struct: how its bytes print
}

// Arg is one decoded argument of a recorded call, as ROCpd's rocpd_arg and
// the JSON output show it.
type Arg struct {
	Position int
	Type     string
	Name     string
	Value    string
}

// Params returns the parameters of a HIP function id, or nil.
func Params(function uint32) []Param {
	if int(function) < len(functionParams) {
		return functionParams[function]
	}
	return nil
}

// DecodeArgs turns a HIP record's argument blob (see hip_trace.h) back into
// named, printable arguments. An empty blob (arguments not asked for) gives
// nil; arguments the recorder left out for space are missing from the end.
func DecodeArgs(function uint32, blob []byte) ([]Arg, error) {
	return AppendArgs(nil, function, blob)
}

// AppendArgs is DecodeArgs appending to dst, so that a writer decoding
// millions of calls reuses one slice. On an error it returns the arguments
// decoded before it.
func AppendArgs(dst []Arg, function uint32, blob []byte) ([]Arg, error) {
	params := Params(function)
	if params == nil {
		return dst, fmt.Errorf("hip function id %d: unknown", function)
	}
	for i := 0; len(blob) > 0; i++ {
		if i >= len(params) || len(blob) < 4 {
			return dst, fmt.Errorf("hip function id %d: argument blob has more than its %d parameters", function, len(params))
		}
		n := binary.LittleEndian.Uint32(blob)
		step := (4 + int(n) + 3) &^ 3
		if int(n) > len(blob)-4 {
			return dst, fmt.Errorf("hip function id %d: argument %d overruns the blob", function, i)
		}
		p := params[i]
		dst = append(dst, Arg{Position: i, Type: p.Type, Name: p.Name, Value: format(p.Kind, blob[4:4+n])})
		if step > len(blob) {
			step = len(blob)
		}
		blob = blob[step:]
	}
	return dst, nil
}

// Handle returns the value of a pointer-sized argument printed by format
// ("0x1f00"), e.g. a hipStream_t, as a number.
func (a *Arg) Handle() (uint64, bool) {
	h, ok := strings.CutPrefix(a.Value, "0x")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(h, 16, 64)
	return v, err == nil
}

// format prints an argument's bytes: addresses in hex, numbers in decimal,
// structs as their bytes.
func format(kind string, b []byte) string {
	var u uint64
	switch len(b) {
	case 1:
		u = uint64(b[0])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(b))
	case 4:
		u = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		u = binary.LittleEndian.Uint64(b)
	default:
		kind = "struct"
	}
	switch kind {
	case "ptr":
		return "0x" + strconv.FormatUint(u, 16)
	case "uint":
		return strconv.FormatUint(u, 10)
	case "int":
		shift := 64 - 8*uint(len(b))
		return strconv.FormatInt(int64(u<<shift)>>shift, 10)
	case "bool":
		return strconv.FormatBool(u != 0)
	case "float":
		if len(b) == 4 {
			return strconv.FormatFloat(float64(math.Float32frombits(uint32(u))), 'g', -1, 32)
		}
		return strconv.FormatFloat(math.Float64frombits(u), 'g', -1, 64)
	}
	// A struct by value: its 32-bit words, which is what dim3 and most HIP
	// descriptors are made of.
	var words []string
	for len(b) >= 4 {
		words = append(words, strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b)), 10))
		b = b[4:]
	}
	for _, c := range b {
		words = append(words, strconv.FormatUint(uint64(c), 10))
	}
	return "{" + strings.Join(words, ", ") + "}"
}
