// Package tracing owns the spool: the binary record format the injected
// libraries write (spool.h, shared with the preload library and the shim) and
// the reader that streams those records back, one process at a time, for the
// output writers.
//
// A spool file holds one process image's records in 64 KiB chunks, each
// written by one thread. A record counts once its header word is published;
// torn records (the process died while writing them) are skipped and
// counted, never returned. The layout is documented in spool.h and
// docs/spool.md.
package tracing
