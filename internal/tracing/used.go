package tracing

import (
	"encoding/binary"
	"io"
)

// UsedSize is how much of a spool of size bytes holds its chunks: the
// header's reserved chunks (once its writers are gone, the rest is the
// recorder's pre-allocation, which no reader looks at). ok is false when
// the header is not a spool's; a copy of the first UsedSize bytes reads
// back as the whole spool.
func UsedSize(r io.ReaderAt, size int64) (used int64, ok bool) {
	var h [HeaderFixedSize]byte
	if size < ChunkSize {
		return 0, false
	}
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return 0, false
	}
	if binary.LittleEndian.Uint64(h[:]) != SpoolMagic || binary.LittleEndian.Uint32(h[16:]) != ChunkSize {
		return 0, false
	}
	n := binary.LittleEndian.Uint64(h[64:])
	if n == 0 || n > uint64(size/ChunkSize) {
		return size, true
	}
	return int64(n) * ChunkSize, true
}
