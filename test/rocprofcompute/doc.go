// Package rocprofcompute runs AMD's rocprofiler-compute, unmodified, against
// rocprof-go on the virtual GPU: `rocprof-compute profile` (every section,
// --no-roof) and `analyze` for gfx90a and gfx942, with rocprofv3's csv, json
// and rocpd outputs, and checks the report's values the virtual GPU's
// counter model fixes (docs/rocprofiler-compute.md).
//
// The client's source is not in CI, so the test is behind the build tag
// rocprofcompute: `make test-rocprofiler-compute` extracts the client,
// installs rocprof-go and runs it.
package rocprofcompute
