// Package ranges answers --kernel-rename's question: which ROCTx message
// names a call a thread made, as rocprofv3 decides it?
//
// rocprofv3 keeps a stack of messages per thread: roctxRangePushA pushes its
// message, roctxMarkA pushes its message too (and nothing ever pops it by
// itself), roctxRangePop pops whatever is on top. A kernel dispatch takes
// the top message of its submitting thread's stack at the time of its
// launch, so a dispatch after a mark takes the mark's name until a push
// covers it.
//
// The preload library records each roctxRangePushA..roctxRangePop pair as
// one thread-range marker carrying the push's correlation id and, in its
// range id, the pop's; a mark carries its own id. Correlation ids grow on
// each thread, so replaying a thread's pushes, pops and marks in id order
// rebuilds its stack at any call: a HIP call (and every kernel dispatch and
// copy the shim records under it, which carry the call's id and thread)
// sees the stack as the events with smaller ids left it.
package ranges
