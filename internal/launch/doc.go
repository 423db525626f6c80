// Package launch runs the profiled application: once per counter pass, with the
// preload library in LD_PRELOAD and the shim in HSA_TOOLS_LIB, as a subreaper that
// forwards signals and waits for every descendant, then hands the recorded spools
// to the output writers. Before the app starts it checks what would make the run
// fail (an output directory, --virtual-gpu's needs) and warns about what would
// make the app fail (no GPU, no code object for the virtual GPU's architecture).
// It also unpacks the libraries the CLI embeds.
package launch
