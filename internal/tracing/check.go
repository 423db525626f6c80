package tracing

import (
	"fmt"
	"syscall"
)

// HeaderCountsAbandoned is rpg_spool_header.flags's RPG_HEADER_COUNTS_ABANDONED:
// the writer counts the chunks it handed out that got no storage
// (ProcessInfo.ChunksAbandoned), so every other chunk it handed out holds
// its chunk header.
const HeaderCountsAbandoned = 1

// LostChunks checks what the spool published against what reads back: the
// chunks the writer handed out (the header's chunks_reserved) and stored
// its chunk header in, that read back without it. A file system that
// accepted the writes into the mapping and did not keep them (FUSE or NFS
// without room, whose write-back failed) leaves such chunks: every record
// in them is lost, and how many there were is unknown (up to a chunk's
// worth each). Chunks the writer abandoned (the file could not grow: their
// records count in Dropped) are not lost chunks; a writer before
// HeaderCountsAbandoned abandoned chunks only past the file's end.
//
// It reads each chunk's first 16 bytes, not the records.
func (r *Reader) LostChunks() uint64 {
	inFile := uint64(len(r.data) / ChunkSize)
	reserved := r.info.ChunksReserved
	n := min(reserved, inFile)
	var empty uint64
	for c := uint64(1); c < n; c++ {
		h := r.data[c*ChunkSize:]
		if le.Uint32(h) != ChunkMagic || le.Uint64(h[8:]) != c {
			empty++
		}
	}
	var abandoned uint64
	if r.info.HeaderFlags&HeaderCountsAbandoned != 0 {
		// Those reserved past the file's end are abandoned for sure; the
		// rest of the count lies inside the file (a segment that failed
		// once and grew later).
		abandoned = r.info.ChunksAbandoned - min(r.info.ChunksAbandoned, reserved-n)
	}
	return empty - min(empty, abandoned)
}

// StoreError says why the spool's writer could not grow its file, from
// the header's store_errno ("" when it never failed).
func (p *ProcessInfo) StoreError() string {
	if p.StoreErrno == 0 {
		return ""
	}
	return fmt.Sprintf("%v (errno %d)", syscall.Errno(p.StoreErrno), p.StoreErrno)
}
