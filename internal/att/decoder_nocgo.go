//go:build !cgo

package att

import "errors"

// Decoder needs cgo (dlopen); without it decoding is refused.
type Decoder struct{ Path string }

var errNoCgo = errors.New("thread-trace decoding needs a cgo build of rocprof-go (dlopen)")

// Open fails: the decoder is loaded through cgo.
func Open(path string) (*Decoder, error) { return nil, errNoCgo }

// Close does nothing.
func (d *Decoder) Close() {}

// Decode fails: the decoder is loaded through cgo.
func (d *Decoder) Decode(se int, data []byte, isa ISA) (*SETrace, error) { return nil, errNoCgo }
