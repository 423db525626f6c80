package model

import (
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/hipapi"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// HIP call arguments. The preload library copies each traced HIP call's
// arguments into its record when an output that shows them was asked for
// (ROCpd, JSON, Perfetto: hip_trace.c); rocprofv3 shows them in ROCpd's
// rocpd_arg (and so the region_args, events_args and stream_args views), in
// JSON's hip_api buffer records ("args": type, name, value) and as slice
// arguments when a database is converted to Perfetto.

// ArgDecoder decodes a call's arguments into a slice it reuses.
type ArgDecoder struct {
	buf []hipapi.Arg
}

// Decode returns the call's arguments (nil when none were recorded). The
// slice is valid until the next call. A damaged blob gives the arguments
// before the damage: the call itself is still written.
func (d *ArgDecoder) Decode(a *tracing.APICall) []hipapi.Arg {
	if len(a.Args) == 0 || (a.Domain != tracing.DomainHIPRuntime && a.Domain != tracing.DomainHIPCompiler) {
		return nil
	}
	d.buf, _ = hipapi.AppendArgs(d.buf[:0], a.Function, a.Args)
	return d.buf
}

// IsStreamArg reports whether an argument is a hipStream_t passed by value,
// the stream a call works on (a hipStream_t* is where a call returns one).
func IsStreamArg(a *hipapi.Arg) bool { return a.Type == "hipStream_t" }

// StreamNumbers gives hipStream_t handles the numbers the dispatch and copy
// records carry (0 for the null stream, then 1, 2, ... in order of first
// use; preload/hip_stream.c). The preload library notes each number's handle
// once (tracing.TableStream), with the correlation id of the call that first
// needed it: a handle HIP reuses after hipStreamDestroy gets a new number.
type StreamNumbers map[uint64][]tracing.StreamNote // by handle, in correlation order

func (s StreamNumbers) add(n tracing.StreamNote) {
	s[n.Handle] = append(s[n.Handle], n)
}

// sort orders each handle's notes by correlation id, once the spool is read.
func (s StreamNumbers) sort() {
	for _, l := range s {
		sort.Slice(l, func(i, j int) bool { return l[i].CorrelationID < l[j].CorrelationID })
	}
}

// Number is the stream number a call (correlation id corr) meant by handle:
// the one numbered last at or before the call, else the first numbered
// after it (a call on a stream before its first dispatch or copy). ok is
// false for a handle never numbered (a stream no dispatch or copy used).
func (s StreamNumbers) Number(handle, corr uint64) (uint64, bool) {
	if handle == 0 {
		return 0, true
	}
	l := s[handle]
	if len(l) == 0 {
		return 0, false
	}
	i := sort.Search(len(l), func(i int) bool { return l[i].CorrelationID > corr })
	if i == 0 {
		return l[0].Number, true
	}
	return l[i-1].Number, true
}
