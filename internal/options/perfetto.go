package options

import "github.com/rocprof-go/rocprof-go/internal/output/format"

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
//     daemon's session) has no meaning and is refused.
//   - --perfetto-shmem-size-hint sizes the memory a producer shares with the
//     tracing service; there is neither here, so it is refused.

// validatePerfetto refuses the Perfetto options that have no meaning in
// rocprof-go and checks the ones that do.
func (c *Config) validatePerfetto() ([]string, error) {
	if c.PerfettoBackend == "system" {
		return nil, &UsageError{Option: "--perfetto-backend", Msg: "system has no meaning in rocprof-go: it writes the Perfetto trace itself " +
			"(-f pftrace), from the recorded data after the app ends, and connects to no Perfetto tracing service (traced); " +
			"leave the option out (inprocess is what rocprof-go does) and open the .pftrace in https://ui.perfetto.dev or trace_processor"}
	}
	if c.IsSet("perfetto_shmem_size_hint") {
		return nil, &UsageError{Option: "--perfetto-shmem-size-hint", Msg: "has no meaning in rocprof-go: the app's records go to " +
			"rocprof-go's spool, not through a Perfetto shared memory buffer, and the trace is written after the app ends; " +
			"leave the option out (--perfetto-buffer-size caps the trace)"}
	}
	if c.IsSet("perfetto_buffer_size") && c.PerfettoBufferSize <= 0 {
		return nil, &UsageError{Option: "--perfetto-buffer-size", Msg: "must be a positive number of KB (leave it out for a trace without a cap)"}
	}
	var warnings []string
	if (c.IsSet("perfetto_buffer_size") || c.IsSet("perfetto_buffer_fill_policy")) && !hasPftrace(c.OutputFormat) {
		warnings = append(warnings, "--perfetto-buffer-size and --perfetto-buffer-fill-policy act on the Perfetto trace only, "+
			"and -f does not ask for one (add pftrace)")
	}
	return warnings, nil
}

func hasPftrace(formats []string) bool {
	for _, f := range formats {
		if format.Perfetto.Is(f) {
			return true
		}
	}
	return false
}
