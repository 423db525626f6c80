package rocprof

// A spool cut short while this package reads it (Run's outputs, the
// readers, Compare) ends in a TornSpoolError rather than a fatal fault of
// the program: linking internal/faultguard registers its SIGBUS guard with
// the spool reader.
import _ "github.com/rocprof-go/rocprof-go/internal/faultguard"
