package options

import (
	"fmt"

	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// rocprofv3's Perfetto options act on the Perfetto SDK's in-process
// tracing session; rocprof-go writes the .pftrace itself from the spools
// after the app ended (internal/output/perfetto). What each one means here
// (docs/options.md, "Perfetto options"):
//
//   - --perfetto-buffer-size KB caps the trace as the session's buffer
//     does: the records beyond it are left out, as
//     --perfetto-buffer-fill-policy says (discard keeps the first, ring_buffer
//     the last), and reported lost. Unset, the trace has no cap (rocprofv3's
//     buffer is 1 GiB).
//   - --perfetto-backend inprocess is what rocprof-go does; system (a traced
//     daemon's session) is accepted, as rocprofv3 accepts it, with a note:
//     the trace is the .pftrace file all the same.
//   - --perfetto-shmem-size-hint sizes the memory a producer shares with the
//     tracing service; there is neither here, so it is accepted (an integer,
//     as rocprofv3's argparse checks it) with a note and changes nothing.
//
// An option rocprofv3 accepts is never refused for having no meaning here
// (rocprofv3's own tests pass these hints).

// validatePerfetto checks the Perfetto options and returns the warnings
// and the notes (options accepted that change nothing here).
func (c *Config) validatePerfetto() (warnings, notes []string, err error) {
	if c.PerfettoBackend == "system" {
		notes = append(notes, "--perfetto-backend system changes nothing in rocprof-go: it connects to no Perfetto tracing service (traced) "+
			"and writes the trace itself, after the app ends, as the .pftrace file (-f pftrace); open it in https://ui.perfetto.dev or trace_processor")
	}
	if c.IsSet("perfetto_shmem_size_hint") {
		notes = append(notes, fmt.Sprintf("--perfetto-shmem-size-hint %d changes nothing in rocprof-go: the app's records go to its spool, "+
			"not through a Perfetto shared memory buffer, and the trace is written after the app ends (--perfetto-buffer-size caps it)",
			c.PerfettoShmemSizeHint))
	}
	if c.IsSet("perfetto_buffer_size") && c.PerfettoBufferSize <= 0 {
		return nil, nil, &UsageError{Option: "--perfetto-buffer-size", Msg: "must be a positive number of KB (leave it out for a trace without a cap)"}
	}
	if (c.IsSet("perfetto_buffer_size") || c.IsSet("perfetto_buffer_fill_policy")) && !hasPftrace(c.OutputFormat) {
		warnings = append(warnings, "--perfetto-buffer-size and --perfetto-buffer-fill-policy act on the Perfetto trace only, "+
			"and -f does not ask for one (add pftrace)")
	}
	return warnings, notes, nil
}

func hasPftrace(formats []string) bool {
	for _, f := range formats {
		if format.Perfetto.Is(f) {
			return true
		}
	}
	return false
}
