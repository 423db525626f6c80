// Package ranges answers --kernel-rename's question: which ROCTx push/pop
// range was a thread inside when it made a given call?
//
// The preload library records each roctxRangePushA..roctxRangePop pair as
// one thread-range marker carrying the push's correlation id and, in its
// range id, the pop's. Correlation ids only grow, so a HIP call made inside
// the range — and every kernel dispatch and copy the shim records under that
// call, which carry the call's id and its thread — has an id strictly
// between the two. On one thread the ranges nest, so the innermost enclosing
// range is well defined.
package ranges
