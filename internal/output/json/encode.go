package json

import (
	"bufio"
	"math"
	"strconv"
	"unicode/utf8"
)

// jsonWriter streams JSON tokens. rocprofv3's layout is fixed, so the
// writer emits it directly instead of building values; commas follow a
// stack of open containers.
type jsonWriter struct {
	w        *bufio.Writer
	buf      []byte
	first    []bool // per open container: nothing written yet
	afterKey bool
	arrays   []bool
	err      error
}

func newJSONWriter(w *bufio.Writer) *jsonWriter {
	return &jsonWriter{w: w, buf: make([]byte, 0, 8192)}
}

func (j *jsonWriter) flush() error {
	if j.err == nil && len(j.buf) > 0 {
		_, j.err = j.w.Write(j.buf)
	}
	j.buf = j.buf[:0]
	if j.err == nil {
		j.err = j.w.Flush()
	}
	return j.err
}

func (j *jsonWriter) valueStart() {
	if j.afterKey {
		j.afterKey = false
		return
	}
	if n := len(j.first); n > 0 {
		if !j.first[n-1] {
			j.buf = append(j.buf, ',')
		}
		j.first[n-1] = false
	}
}

func (j *jsonWriter) key(k string) *jsonWriter {
	j.valueStart()
	j.buf = appendJSONString(j.buf, k)
	j.buf = append(j.buf, ':')
	j.afterKey = true
	return j
}

func (j *jsonWriter) obj() *jsonWriter { j.open('{'); return j }
func (j *jsonWriter) arr() *jsonWriter { j.open('['); return j }
func (j *jsonWriter) end() *jsonWriter {
	c := byte('}')
	if j.arrays[len(j.arrays)-1] {
		c = ']'
	}
	j.arrays = j.arrays[:len(j.arrays)-1]
	j.first = j.first[:len(j.first)-1]
	j.buf = append(j.buf, c)
	if len(j.buf) >= 1<<16 && j.err == nil {
		_, j.err = j.w.Write(j.buf)
		j.buf = j.buf[:0]
	}
	return j
}

func (j *jsonWriter) open(c byte) {
	j.valueStart()
	j.buf = append(j.buf, c)
	j.first = append(j.first, true)
	j.arrays = append(j.arrays, c == '[')
}

func (j *jsonWriter) u(v uint64) *jsonWriter {
	j.valueStart()
	j.buf = strconv.AppendUint(j.buf, v, 10)
	return j
}

func (j *jsonWriter) i(v int64) *jsonWriter {
	j.valueStart()
	j.buf = strconv.AppendInt(j.buf, v, 10)
	return j
}

func (j *jsonWriter) f(v float64) *jsonWriter {
	j.valueStart()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		j.buf = append(j.buf, "null"...)
		return j
	}
	// cereal writes 16 significant digits.
	j.buf = strconv.AppendFloat(j.buf, v, 'g', 16, 64)
	return j
}

func (j *jsonWriter) b(v bool) *jsonWriter {
	j.valueStart()
	j.buf = strconv.AppendBool(j.buf, v)
	return j
}

func (j *jsonWriter) s(v string) *jsonWriter {
	j.valueStart()
	j.buf = appendJSONString(j.buf, v)
	return j
}

// handle writes {"handle": v}, the SDK's wrapper for ids.
func (j *jsonWriter) handle(v uint64) *jsonWriter {
	return j.obj().key("handle").u(v).end()
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as JSON; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\t':
				b = append(b, '\\', 't')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
