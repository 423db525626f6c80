package csv

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// csvFlushSize is how much a CSV file buffers before writing.
const csvFlushSize = 256 << 10

// csvFile is one output file, created on its first row so that a domain
// without records leaves no header-only file behind. Rows are appended to a
// byte buffer with strconv.Append*; a row is begun with begin and finished
// with end.
type csvFile struct {
	fs     model.FileSystem
	path   string
	name   string
	domain string
	header []string
	plain  bool // header names unquoted (rocprof v1's results.csv without --stats)
	w      model.OutputFile
	buf    []byte
	rows   uint64
	bytes  int64
	err    error
	done   bool // committed: complete under its final name
}

func newCSVFile(fs model.FileSystem, prefix, name, domain string, header []string) *csvFile {
	return &csvFile{fs: fs, path: prefix + "_" + name + ".csv", name: name, domain: domain,
		header: header}
}

// begin returns the buffer to append one row to.
func (f *csvFile) begin() []byte {
	if f.w == nil && f.err == nil {
		f.open()
	}
	return f.buf
}

// end takes the row back; rows end with '\n'.
func (f *csvFile) end(b []byte) {
	b = append(b, '\n')
	f.buf = b
	f.rows++
	if len(b) >= csvFlushSize {
		f.flush()
	}
}

func (f *csvFile) open() {
	if err := f.fs.MkdirAll(filepath.Dir(f.path)); err != nil {
		f.err = fmt.Errorf("create output directory for %s: %w", f.path, err)
		return
	}
	w, err := f.fs.Create(f.path)
	if err != nil {
		f.err = fmt.Errorf("create %s: %w", f.path, err)
		return
	}
	f.w = w
	if f.buf == nil {
		f.buf = make([]byte, 0, csvFlushSize+4096)
	}
	for i, h := range f.header {
		if i > 0 {
			f.buf = append(f.buf, ',')
		}
		if f.plain {
			f.buf = append(f.buf, h...)
			continue
		}
		f.buf = appendQuoted(f.buf, h)
	}
	f.buf = append(f.buf, '\n')
}

// writeRows appends rows formatted elsewhere (whole rows, each ending with
// '\n').
func (f *csvFile) writeRows(block []byte, rows uint64) {
	if rows == 0 {
		return
	}
	if f.w == nil && f.err == nil {
		f.open()
	}
	f.rows += rows
	if len(block) < 4096 && len(f.buf)+len(block) <= csvFlushSize {
		f.buf = append(f.buf, block...) // a few rows: gather them
		return
	}
	// A batch's rows go out as they are, without a copy into the buffer.
	f.flush()
	f.write(block)
}

func (f *csvFile) flush() {
	f.write(f.buf)
	f.buf = f.buf[:0]
}

// write writes whole rows out; after an error nothing more is written and
// the file is aborted at close.
func (f *csvFile) write(buf []byte) {
	if f.err == nil && f.w != nil && len(buf) > 0 {
		n, err := f.w.Write(buf)
		f.bytes += int64(n)
		if err != nil {
			f.err = err
			var pe *os.PathError
			if !errors.As(err, &pe) { // an *os.PathError already names the file
				f.err = fmt.Errorf("write %s: %w", f.path, err)
			}
		}
	}
}

// close flushes the file and commits it (it appears under its name,
// complete) or, after any error, aborts it (nothing is left under its
// name). It returns the first error the file met.
func (f *csvFile) close() error {
	if f.w == nil {
		return f.err
	}
	f.flush()
	if f.err == nil {
		if err := f.w.Commit(); err != nil {
			f.err = err
			var pe *os.PathError
			if !errors.As(err, &pe) {
				f.err = fmt.Errorf("close %s: %w", f.path, err)
			}
		}
		f.done = f.err == nil
	} else {
		f.w.Abort()
	}
	f.w = nil
	return f.err
}

// created reports whether the file is complete under its name.
func (f *csvFile) created() bool { return f.done }

// Cell encoders. rocprofv3 quotes string cells without escaping embedded
// quotes; numbers are bare.

func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendUint appends a number and a comma.
func appendUint(b []byte, v uint64) []byte {
	b = appendDecimal(b, v)
	return append(b, ',')
}

// appendDecimal writes the digits straight into b: strconv.AppendUint
// formats into a scratch array and copies, which showed up in profiles
// (timestamps have 19-20 digits). The length comes from the bit length, the
// digits eight at a time from one 64-bit division, then two at a time in
// 32-bit arithmetic.
func appendDecimal(b []byte, v uint64) []byte {
	n := decimalLen(v)
	l := len(b)
	if cap(b)-l < n {
		b = append(b, make([]byte, n)...)
	} else {
		b = b[:l+n]
	}
	i := l + n
	for v >= 1e8 {
		q := v / 1e8
		r := uint32(v - q*1e8)
		v = q
		for k := 0; k < 4; k++ {
			s := r / 100
			d := (r - s*100) * 2
			i -= 2
			b[i], b[i+1] = digitPairs[d], digitPairs[d+1]
			r = s
		}
	}
	w := uint32(v)
	for w >= 100 {
		s := w / 100
		d := (w - s*100) * 2
		i -= 2
		b[i], b[i+1] = digitPairs[d], digitPairs[d+1]
		w = s
	}
	if w >= 10 {
		b[i-2], b[i-1] = digitPairs[w*2], digitPairs[w*2+1]
	} else {
		b[i-1] = byte('0' + w)
	}
	return b
}

// decimalLen is the number of decimal digits of v.
func decimalLen(v uint64) int {
	t := bits.Len64(v) * 1233 >> 12 // about log10(2^bits)
	if v < pow10[t] {
		return max(t, 1)
	}
	return t + 1
}

var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" + "80818283848586878889" +
	"90919293949596979899"

// appendTraceFloat formats a float cell of a trace CSV: fixed with 6
// decimals from 1 up, scientific with 8 digits below (0 included).
func appendTraceFloat(b []byte, v float64) []byte {
	if v >= 1 {
		return strconv.AppendFloat(b, v, 'f', 6, 64)
	}
	return strconv.AppendFloat(b, v, 'e', 8, 64)
}

// appendStatsFloat formats a double of a stats CSV.
func appendStatsFloat(b []byte, v float64) []byte {
	if v > 0.01 {
		return strconv.AppendFloat(b, v, 'f', 6, 64)
	}
	return strconv.AppendFloat(b, v, 'e', 8, 64)
}

// appendPercentage formats the stats Percentage column.
func appendPercentage(b []byte, v float64) []byte {
	switch {
	case v >= 1:
		return strconv.AppendFloat(b, v, 'f', 2, 64)
	case v > 0.01:
		return strconv.AppendFloat(b, v, 'f', 4, 64)
	}
	return strconv.AppendFloat(b, v, 'e', 3, 64)
}

const hexDigitsLower = "0123456789abcdef"

// appendAddress formats "0x" and 16 zero-padded hex digits, quoted.
func appendAddress(b []byte, v uint64) []byte {
	b = append(b, '"', '0', 'x')
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hexDigitsLower[(v>>uint(shift))&0xf])
	}
	return append(b, '"')
}
