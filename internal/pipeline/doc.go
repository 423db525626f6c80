// Package pipeline is the body of a profiling run, in one place: resolve
// and check the plan (options, counters against the GPUs, output formats)
// → for each pass: run the app once (internal/launch's RunPass), then write
// that pass's outputs from its spools (internal/output) → the outputs made
// from every pass together → check what was lost → write the manifest
// (run.json). The pass loop is runPasses (run.go); launch calls nothing
// back. Batches run jobs through the same body.
//
// The CLI (cmd/rocprof-go) and the public Go API (pkg/rocprof) are two
// fronts of this package; neither holds run logic of its own. Nothing is
// installed through init hooks: what a run calls is visible from Run down.
package pipeline
