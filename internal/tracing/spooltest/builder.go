package spooltest

import (
	"encoding"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

var le = binary.LittleEndian

// Builder accumulates one process's spool.
type Builder struct {
	info   tracing.ProcessInfo
	chunks [][]byte
	off    int // write offset in the last chunk
}

// New starts a spool for the process described by info (PID, PPID, PGID,
// SID, PSize, StartBoottimeNs, StartRealtimeNs, ForkGeneration, Hostname,
// Argv, Environ, Cwd, Exe are written; the rest is computed).
func New(info tracing.ProcessInfo) *Builder {
	b := &Builder{info: info}
	b.NewChunk()
	return b
}

// NewChunk starts a new chunk, as a new writing thread would.
func (b *Builder) NewChunk() {
	c := make([]byte, tracing.ChunkSize)
	idx := uint64(len(b.chunks) + 1)
	le.PutUint32(c, tracing.ChunkMagic)
	le.PutUint32(c[4:], 1)
	le.PutUint64(c[8:], idx)
	b.chunks = append(b.chunks, c)
	b.off = tracing.ChunkHeaderSize
}

// Add appends a published record, starting a chunk when it does not fit.
func (b *Builder) Add(r encoding.BinaryAppender) {
	rec, err := r.AppendBinary(nil)
	if err != nil {
		panic(err)
	}
	b.AddRaw(rec)
}

// AddRaw appends record bytes as they are.
func (b *Builder) AddRaw(rec []byte) {
	if b.off+len(rec) > tracing.ChunkSize {
		b.NewChunk()
	}
	copy(b.chunks[len(b.chunks)-1][b.off:], rec)
	b.off += len(rec)
}

// AddTorn appends a record whose size is set but which was never published,
// as left by a process killed while writing it.
func (b *Builder) AddTorn(r encoding.BinaryAppender) {
	rec, err := r.AppendBinary(nil)
	if err != nil {
		panic(err)
	}
	rec[7] = 0
	b.AddRaw(rec)
}

// Records reports how many chunks were used.
func (b *Builder) Chunks() int { return len(b.chunks) }

func putBlob(dst []byte, tag uint32, v []byte) []byte {
	var h [8]byte
	le.PutUint32(h[:], tag)
	le.PutUint32(h[4:], uint32(len(v)))
	dst = append(dst, h[:]...)
	dst = append(dst, v...)
	for len(dst)%8 != 0 {
		dst = append(dst, 0)
	}
	return dst
}

func joinNUL(ss []string) []byte {
	var out []byte
	for _, s := range ss {
		out = append(out, s...)
		out = append(out, 0)
	}
	return out
}

// Bytes returns the whole spool file.
func (b *Builder) Bytes() []byte {
	out := make([]byte, tracing.ChunkSize, tracing.ChunkSize*(1+len(b.chunks)))
	p := &b.info
	le.PutUint64(out, tracing.SpoolMagic)
	le.PutUint32(out[8:], tracing.SpoolVersion)
	le.PutUint32(out[12:], tracing.HeaderFixedSize)
	le.PutUint32(out[16:], tracing.ChunkSize)
	le.PutUint32(out[20:], 4<<20)
	for i, v := range []int32{p.PID, p.PPID, p.PGID, p.SID, p.PSize} {
		le.PutUint32(out[24+4*i:], uint32(v))
	}
	le.PutUint64(out[48:], p.StartBoottimeNs)
	le.PutUint64(out[56:], p.StartRealtimeNs)
	le.PutUint64(out[64:], uint64(1+len(b.chunks)))
	le.PutUint64(out[72:], p.Dropped)
	le.PutUint64(out[80:], p.TruncatedRecords)
	le.PutUint64(out[88:], p.ForkGeneration)
	var blob []byte
	blob = putBlob(blob, 4, []byte(p.Hostname))
	blob = putBlob(blob, 3, []byte(p.Cwd))
	blob = putBlob(blob, 5, []byte(p.Exe))
	blob = putBlob(blob, 1, joinNUL(p.Argv))
	blob = putBlob(blob, 2, joinNUL(p.Environ))
	if len(blob) > tracing.ChunkSize-tracing.HeaderFixedSize-8 {
		panic("spooltest: process blob too large")
	}
	le.PutUint32(out[44:], uint32(len(blob)))
	copy(out[tracing.HeaderFixedSize:], blob)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	return out
}

// WriteFile writes the spool into dir under the recorder's naming scheme and
// returns its path.
func (b *Builder) WriteFile(dir string) (string, error) {
	name := fmt.Sprintf("rpg-%d-%d-0.spool", b.info.PID, b.info.StartBoottimeNs)
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, b.Bytes(), 0o600)
}
