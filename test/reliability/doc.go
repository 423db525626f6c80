// Package reliability holds rocprof-go's end-to-end fault and security tests.
// They run the built CLI (build/rocprof-go, or $ROCPROF_GO_BUILD/rocprof-go)
// on the virtual GPU with the sample apps of testdata/apps, because the
// failures users meet — an app that aborts, is killed, forks, runs behind a
// wrapper, fills the disk — only show up with real processes, real signals
// and real files. Each test compares the records the app says it produced
// (its own printed counts) with the records found in the output files, and
// checks the exit status rocprof-go returns. docs/reliability.md lists the
// tests and their last measured results.
package reliability
