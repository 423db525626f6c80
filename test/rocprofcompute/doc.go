// Package rocprofcompute runs AMD's rocprofiler-compute, unmodified, against
// rocprof-go on the virtual GPU: `rocprof-compute profile` (every section,
// --no-roof) and `analyze` for gfx90a and gfx942, with rocprofv3's csv, json
// and rocpd outputs, and checks the report's values the virtual GPU's
// counter model fixes (docs/rocprofiler-compute.md).
//
// The client is not in the repository: `make test-rocprofiler-compute`
// unpacks it (by default from the shared folder's clients/ tarball) into the
// build tree, installs rocprof-go and runs this test, which has the build
// tag rocprofcompute so that `go test ./...` does not build it. CI runs the
// target on the 6.4 and the 7.2 root.
package rocprofcompute
