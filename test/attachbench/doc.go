// Package attachbench measures what `rocprof-go --attach PID` costs the
// process attached to (issue 42, docs/attach.md "Measured costs"): the
// time to attach and to detach, and the longest stall the app's threads
// see during each, beside the same app's iteration time unattached. It has
// only a benchmark (BenchmarkAttachCost), run by `make bench`, none by
// `make test`.
package attachbench
