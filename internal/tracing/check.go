package tracing

import (
	"fmt"
	"syscall"
)

// HeaderCountsAbandoned is rpg_spool_header.flags's RPG_HEADER_COUNTS_ABANDONED:
// the writer counts the chunks it handed out that got no storage
// (ProcessInfo.ChunksAbandoned) and says why (StoreErrno).
const HeaderCountsAbandoned = 1

// HeaderCountsHeaded is rpg_spool_header.flags's RPG_HEADER_COUNTS_HEADED:
// the writer counts the chunks whose chunk header it stored
// (ProcessInfo.ChunksHeaded), right after storing it.
const HeaderCountsHeaded = 2

// HeaderSeals is rpg_spool_header.flags's RPG_HEADER_SEALS: the writer
// seals the chunks it leaves for good (ChunkSealed) and obeys the header's
// stop word, so the CLI may drain the spool while it is written (drain.go).
const HeaderSeals = 4

// LostChunks checks what the spool published against what reads back: the
// chunks whose chunk header the writer stored (the header's
// chunks_headed), less those that read back with it. A file system that
// accepted the writes into the mapping and did not keep them (FUSE or NFS
// without room, whose write-back failed) leaves such chunks: every record
// in them is lost, and how many there were is unknown (up to a chunk's
// worth each). A chunk handed out (chunks_reserved) and never headed is
// not lost: its writer abandoned it (the file could not grow: its records
// count in Dropped) or was killed before storing the header, while the
// chunk's segment was mapped (a launcher's SIGKILL at teardown); no
// record went into it. A headed chunk past the file's end (a file shorter
// than its writer left it) is lost too.
//
// The count is never negative, and it is a lower bound: a writer killed
// between storing a chunk's header and counting it leaves one chunk more
// with a header than counted, which hides one lost chunk; the header
// itself (page 0) is the storage's too: when it read back older than the
// writer left it, the chunks headed after are not judged, and when it did
// not read back at all the file is no spool (the reader says so). A spool
// of a writer without the count (no HeaderCountsHeaded) is not judged: 0.
//
// It reads each chunk's first 16 bytes, not the records.
func (r *Reader) LostChunks() uint64 {
	if r.info.HeaderFlags&HeaderCountsHeaded == 0 {
		return 0
	}
	inFile := uint64(len(r.data) / ChunkSize)
	n := min(r.info.ChunksReserved, inFile)
	readBack := uint64(1) // the header chunk, read to get here
	for c := uint64(1); c < n; c++ {
		h := r.data[c*ChunkSize:]
		if isChunkHeader(h, c) {
			readBack++
		}
	}
	return r.info.ChunksHeaded - min(r.info.ChunksHeaded, readBack)
}

// isChunkHeader reports whether h starts with chunk c's header, sealed or
// not.
func isChunkHeader(h []byte, c uint64) bool {
	m := le.Uint32(h)
	return (m == ChunkMagic || m == ChunkSealed) && le.Uint64(h[8:]) == c
}

// StoreError says why the spool's writer could not grow its file, from
// the header's store_errno ("" when it never failed).
func (p *ProcessInfo) StoreError() string {
	switch {
	case p.StopSeen&StopOutputFull != 0:
		return StoppedOutputFull
	case p.StopSeen&StopShmShare != 0:
		return StoppedShmShare
	case p.StoreErrno == 0:
		return ""
	}
	return fmt.Sprintf("%v (errno %d)", syscall.Errno(p.StoreErrno), p.StoreErrno)
}

// Why a spool's records were dropped when rocprof-go stopped its recording
// (the header's stop word, drain.go): StoreError's words.
const (
	StoppedOutputFull = "recording stopped by rocprof-go: the output file system would have been filled (free space there, or set ROCPROF_GO_OUTPUT_RESERVE_MIB lower)"
	StoppedShmShare   = "recording paused by rocprof-go while the run's share of /dev/shm was used up and the drain to the output file system caught up (raise ROCPROF_GO_SHM_SHARE_MIB, or write the outputs to a faster file system)"
)

// Stopped reports whether a StoreError is rocprof-go's stop, not the
// spool's file system's error.
func Stopped(storeError string) bool {
	return storeError == StoppedOutputFull || storeError == StoppedShmShare
}

// StoreLosses words what a spool's storage lost, for the messages of a run
// and of convert alike: the records the recorder dropped (and why its
// spool could not grow) and the chunks that read back empty.
func StoreLosses(dropped, lostChunks uint64, storeError string) []string {
	var parts []string
	if dropped > 0 {
		why := ""
		if Stopped(storeError) {
			why = " (" + storeError + ")"
		} else if storeError != "" {
			why = " (its spool could not grow: " + storeError + ")"
		}
		parts = append(parts, fmt.Sprintf("%d dropped by the recorder%s", dropped, why))
	}
	if lostChunks > 0 {
		parts = append(parts, fmt.Sprintf("%d spool chunks written by the app read back empty (the spool's file system did not keep them: every record in them, up to 64 KiB each, is lost)", lostChunks))
	}
	return parts
}
