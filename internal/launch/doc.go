// Package launch runs the profiled application for one pass: with the
// preload library in LD_PRELOAD and the shim in HSA_TOOLS_LIB, as a subreaper
// that forwards signals and waits for every descendant, in the run's private
// directory, and returns what the pass left (its spools, the exit status, the
// processes that could not record). internal/pipeline owns the pass loop and
// the writing of the outputs: it calls Runner.Check, Runner.Begin and
// Run.RunPass per pass, and tells the pass when its outputs are being written
// (Pass.WritingOutputs, OutputsWritten), so that a launcher's teardown
// meanwhile finds the spools rescued (rescue.go) and a failed writing keeps
// them. Before the app starts, Check finds what would make the run fail (an
// output directory, --virtual-gpu's needs) and warns about what would make
// the app fail (no GPU, no code object for the virtual GPU's architecture).
// It also unpacks the libraries the CLI embeds.
package launch
