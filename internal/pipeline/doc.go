// Package pipeline is the body of a profiling run, in one place: resolve
// and check the plan (options, counters against the GPUs, output formats)
// → launch the app once per pass (internal/launch) → write every output
// from the spools (internal/output) → check what was lost → write the
// manifest (run.json). Batches run jobs through the same body.
//
// The CLI (cmd/rocprof-go) and the public Go API (pkg/rocprof) are two
// fronts of this package; neither holds run logic of its own. Nothing is
// installed through init hooks: what a run calls is visible from Run down.
package pipeline
