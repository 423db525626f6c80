// Package perfetto writes a Perfetto protobuf trace (-f pftrace) of an
// output file set: one track per thread, stream (or queue, --group-by-queue)
// and copy engine, slices that nest on every track (layout.go), flows from
// each call to its dispatches and copies, counter tracks; the wire format
// is encoded by hand (proto.go).
package perfetto
