// Package launch runs the profiled application: once per counter pass, with the
// preload library in LD_PRELOAD and the shim in HSA_TOOLS_LIB, as a subreaper that
// forwards signals and waits for every descendant, then hands the recorded spools
// to the output writers. It also unpacks the libraries the CLI embeds.
package launch
