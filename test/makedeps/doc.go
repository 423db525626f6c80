// Package makedeps checks the make rules' prerequisites: a change in any
// source a built file is made from rebuilds it (make -n -W FILE, which
// pretends FILE was just modified without touching it), and where
// test-rocprofiler-compute takes the client's source from.
package makedeps
