package tracing

import (
	"bytes"
	"fmt"
	"strings"
)

// Process blob tags (rpg_blob_tag).
const (
	blobEnd      = 0
	blobArgv     = 1
	blobEnviron  = 2
	blobCwd      = 3
	blobHostname = 4
	blobExe      = 5
)

// ProcessInfo is what a spool's header says about the process that wrote it:
// everything output path placeholders need.
type ProcessInfo struct {
	Path             string // spool file
	PID, PPID        int32
	PGID, SID        int32
	PSize            int32 // children of the parent when the spool was created, -1 unknown
	StartBoottimeNs  uint64
	StartRealtimeNs  uint64
	ForkGeneration   uint64 // forks since the last exec
	Hostname         string
	Argv             []string
	Environ          []string
	Cwd              string
	Exe              string
	ChunksReserved   uint64
	Dropped          uint64 // records the writer could not store
	TruncatedRecords uint64 // records stored with a shortened string
	// ChunksAbandoned are chunks the writer handed out that got no storage
	// (the file could not grow; their records count in Dropped), and
	// StoreErrno why the file last could not grow (ENOSPC...), 0 if never.
	// Both are kept by writers that set HeaderCountsAbandoned in
	// HeaderFlags; older spools have 0 (check.go).
	ChunksAbandoned uint64
	StoreErrno      int32
	HeaderFlags     uint32
	// ChunksHeaded are the chunks whose chunk header the writer stored,
	// the header chunk included (counted right after the header, so a
	// chunk handed out to a writer killed before it stored one is not
	// among them); kept by writers that set HeaderCountsHeaded.
	ChunksHeaded uint64
	// Stop is the header's stop word (StopShmShare, StopOutputFull), as
	// the CLI left it; StopSeen the stop bits a writer obeyed (it dropped
	// records instead of taking a new chunk).
	Stop              uint32
	StopSeen          uint32
	headerBlobDecoded bool
}

// Getenv returns the value of an environment variable of the process.
func (p *ProcessInfo) Getenv(name string) (string, bool) {
	for _, e := range p.Environ {
		if len(e) > len(name) && e[len(name)] == '=' && strings.HasPrefix(e, name) {
			return e[len(name)+1:], true
		}
	}
	return "", false
}

func splitNUL(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// decodeHeader reads chunk 0. It never fails on a bad blob: a process with an
// unreadable blob still has records worth reading.
func decodeHeader(h []byte, p *ProcessInfo) error {
	if len(h) < HeaderFixedSize || le.Uint64(h) != SpoolMagic {
		return fmt.Errorf("bad magic: %w", ErrNotSpool)
	}
	if v := le.Uint32(h[8:]); v != SpoolVersion {
		return &VersionError{Version: v}
	}
	if le.Uint32(h[12:]) != HeaderFixedSize || le.Uint32(h[16:]) != ChunkSize {
		return fmt.Errorf("bad header or chunk size: %w", ErrNotSpool)
	}
	p.PID = int32(le.Uint32(h[24:]))
	p.PPID = int32(le.Uint32(h[28:]))
	p.PGID = int32(le.Uint32(h[32:]))
	p.SID = int32(le.Uint32(h[36:]))
	p.PSize = int32(le.Uint32(h[40:]))
	blobSize := le.Uint32(h[44:])
	p.StartBoottimeNs = le.Uint64(h[48:])
	p.StartRealtimeNs = le.Uint64(h[56:])
	p.ChunksReserved = le.Uint64(h[64:])
	p.Dropped = le.Uint64(h[72:])
	p.TruncatedRecords = le.Uint64(h[80:])
	p.ForkGeneration = le.Uint64(h[88:])
	p.ChunksAbandoned = le.Uint64(h[96:])
	p.StoreErrno = int32(le.Uint32(h[104:]))
	p.HeaderFlags = le.Uint32(h[108:])
	p.ChunksHeaded = le.Uint64(h[112:])
	p.Stop = le.Uint32(h[120:])
	p.StopSeen = le.Uint32(h[124:])

	blob := h[HeaderFixedSize:]
	if uint64(blobSize) < uint64(len(blob)) {
		blob = blob[:blobSize]
	}
	for len(blob) >= 8 {
		tag, n := le.Uint32(blob), le.Uint32(blob[4:])
		if tag == blobEnd || uint64(n) > uint64(len(blob)-8) {
			break
		}
		v := blob[8 : 8+n]
		switch tag {
		case blobArgv:
			p.Argv = splitNUL(v)
		case blobEnviron:
			p.Environ = splitNUL(v)
		case blobCwd:
			p.Cwd = string(v)
		case blobHostname:
			p.Hostname = string(v)
		case blobExe:
			p.Exe = string(v)
		}
		step := 8 + pad8(int(n))
		if step > len(blob) {
			break
		}
		blob = blob[step:]
	}
	p.headerBlobDecoded = true
	return nil
}
