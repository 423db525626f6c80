package tracing

import (
	"encoding"
	"fmt"
	"io"
)

// The one Go writer of spools: what the recorder (recorder.c) writes, for
// the spools rocprof-go makes itself (convert's from ROCpd databases, the
// tests' synthetic ones). The reader reads both the same way.

// segmentSize is the recorder's RPG_SEGMENT_SIZE (the header records it).
const segmentSize = 4 << 20

// EncodeHeader returns chunk 0 of a spool whose records fill chunks chunks
// after it: the fixed header as fill_header writes it and the process blob
// (host name, working directory, executable, argv, environment), the magic
// last. An environment that does not fit the chunk is left out; a command
// line that does not fit fails.
func EncodeHeader(p *ProcessInfo, chunks uint64) ([]byte, error) {
	h := make([]byte, ChunkSize)
	le.PutUint32(h[8:], SpoolVersion)
	le.PutUint32(h[12:], HeaderFixedSize)
	le.PutUint32(h[16:], ChunkSize)
	le.PutUint32(h[20:], segmentSize)
	for i, v := range []int32{p.PID, p.PPID, p.PGID, p.SID, p.PSize} {
		le.PutUint32(h[24+4*i:], uint32(v))
	}
	le.PutUint64(h[48:], p.StartBoottimeNs)
	le.PutUint64(h[56:], p.StartRealtimeNs)
	le.PutUint64(h[64:], 1+chunks)
	le.PutUint64(h[72:], p.Dropped)
	le.PutUint64(h[80:], p.TruncatedRecords)
	le.PutUint64(h[88:], p.ForkGeneration)
	// It abandons no chunk and heads every chunk it starts.
	le.PutUint32(h[108:], HeaderCountsAbandoned|HeaderCountsHeaded)
	le.PutUint64(h[112:], 1+chunks)
	var blob []byte
	blob = appendBlob(blob, blobHostname, []byte(p.Hostname))
	if p.Cwd != "" {
		blob = appendBlob(blob, blobCwd, []byte(p.Cwd))
	}
	blob = appendBlob(blob, blobExe, []byte(p.Exe))
	blob = appendBlob(blob, blobArgv, joinNUL(p.Argv))
	room := ChunkSize - HeaderFixedSize
	env := joinNUL(p.Environ)
	if len(blob)+8+pad8(len(env)) > room {
		env = nil // the header chunk bounds the blob: a huge environment is dropped
	}
	blob = appendBlob(blob, blobEnviron, env)
	if len(blob) > room {
		return nil, fmt.Errorf("process command line of %d bytes does not fit a spool header", len(blob))
	}
	le.PutUint32(h[44:], uint32(len(blob)))
	copy(h[HeaderFixedSize:], blob)
	le.PutUint64(h, SpoolMagic) // last, as the recorder stores it
	return h, nil
}

func appendBlob(dst []byte, tag uint32, v []byte) []byte {
	var h [8]byte
	le.PutUint32(h[:], tag)
	le.PutUint32(h[4:], uint32(len(v)))
	dst = append(append(dst, h[:]...), v...)
	for len(dst)%8 != 0 {
		dst = append(dst, 0)
	}
	return dst
}

func joinNUL(ss []string) []byte {
	var out []byte
	for _, s := range ss {
		out = append(append(out, s...), 0)
	}
	return out
}

// Writer writes one process's spool to w: chunk 0 when it is closed (its
// count of chunks known), the record chunks as they fill, each owned by a
// thread as the recorder's are.
type Writer struct {
	w      io.WriterAt
	info   ProcessInfo
	chunk  []byte
	off    int    // write offset in chunk
	chunks uint64 // chunks started
	rec    []byte
	err    error
}

// NewWriter starts a spool of the process info describes; its first chunk
// is owned by thread owner (the thread its API records are attributed to).
func NewWriter(w io.WriterAt, info ProcessInfo, owner uint32) *Writer {
	sw := &Writer{w: w, info: info, chunk: make([]byte, ChunkSize)}
	sw.start(owner)
	return sw
}

func (w *Writer) start(owner uint32) {
	clear(w.chunk)
	w.chunks++
	le.PutUint32(w.chunk, ChunkMagic)
	le.PutUint32(w.chunk[4:], owner)
	le.PutUint64(w.chunk[8:], w.chunks)
	w.off = ChunkHeaderSize
}

// flush writes the current chunk at its place.
func (w *Writer) flush() error {
	if w.err == nil {
		_, w.err = w.w.WriteAt(w.chunk, int64(w.chunks)*ChunkSize)
	}
	return w.err
}

// NewChunk ends the current chunk and starts one owned by thread owner, as
// a new writing thread would.
func (w *Writer) NewChunk(owner uint32) error {
	if w.flush() != nil {
		return w.err
	}
	w.start(owner)
	return nil
}

// Add appends a published record.
func (w *Writer) Add(r encoding.BinaryAppender) error {
	if w.err != nil {
		return w.err
	}
	w.rec, w.err = r.AppendBinary(w.rec[:0])
	if w.err != nil {
		return w.err
	}
	return w.AddRaw(w.rec)
}

// AddRaw appends record bytes as they are, starting a chunk of the same
// thread when they do not fit.
func (w *Writer) AddRaw(rec []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(rec) > ChunkSize-ChunkHeaderSize {
		w.err = fmt.Errorf("record of %d bytes does not fit a spool chunk", len(rec))
		return w.err
	}
	if w.off+len(rec) > ChunkSize {
		if err := w.NewChunk(le.Uint32(w.chunk[4:])); err != nil {
			return err
		}
	}
	copy(w.chunk[w.off:], rec)
	w.off += len(rec)
	return nil
}

// Chunks is the number of record chunks started.
func (w *Writer) Chunks() uint64 { return w.chunks }

// Sync writes the current chunk (even when it holds no record yet) and
// chunk 0 as they are now: the spool is whole and readable. Records added
// after it go on in the same chunk; the next Sync writes them.
func (w *Writer) Sync() error {
	if w.flush() != nil {
		return w.err
	}
	h, err := EncodeHeader(&w.info, w.chunks)
	if err != nil {
		w.err = err
		return err
	}
	_, w.err = w.w.WriteAt(h, 0)
	return w.err
}
