package spooltest

import (
	"encoding"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Builder accumulates one process's spool in memory, written by the
// project's one spool writer (tracing.Writer); its chunks are owned by
// thread 1.
type Builder struct {
	info tracing.ProcessInfo
	mem  memFile
	w    *tracing.Writer
}

// memFile is a file in memory.
type memFile struct{ b []byte }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}

// New starts a spool for the process described by info (PID, PPID, PGID,
// SID, PSize, StartBoottimeNs, StartRealtimeNs, Dropped, TruncatedRecords,
// ForkGeneration, Hostname, Argv, Environ, Cwd, Exe are written; the rest
// is computed).
func New(info tracing.ProcessInfo) *Builder {
	b := &Builder{info: info}
	b.w = tracing.NewWriter(&b.mem, info, 1)
	return b
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// NewChunk starts a new chunk, as a new writing thread would.
func (b *Builder) NewChunk() { must(b.w.NewChunk(1)) }

// Add appends a published record, starting a chunk when it does not fit.
func (b *Builder) Add(r encoding.BinaryAppender) { must(b.w.Add(r)) }

// AddRaw appends record bytes as they are.
func (b *Builder) AddRaw(rec []byte) { must(b.w.AddRaw(rec)) }

// AddTorn appends a record whose size is set but which was never published,
// as left by a process killed while writing it.
func (b *Builder) AddTorn(r encoding.BinaryAppender) {
	rec, err := r.AppendBinary(nil)
	must(err)
	rec[7] = 0
	b.AddRaw(rec)
}

// Chunks reports how many chunks were used.
func (b *Builder) Chunks() int { return int(b.w.Chunks()) }

// Bytes returns the whole spool file as it is now.
func (b *Builder) Bytes() []byte {
	must(b.w.Sync())
	return append([]byte(nil), b.mem.b...)
}

// WriteFile writes the spool into dir under the recorder's naming scheme and
// returns its path.
func (b *Builder) WriteFile(dir string) (string, error) {
	name := fmt.Sprintf("rpg-%d-%d-0.spool", b.info.PID, b.info.StartBoottimeNs)
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, b.Bytes(), 0o600)
}

// Agent is an agent-info record as the recorder writes one: node ids, type,
// and names ("Test <name>" as the product).
func Agent(node, logical, typeIdx uint64, typ tracing.AgentType, name string) tracing.AgentInfo {
	var a tracing.AgentInfo
	a.Values[tracing.AgentNodeID] = node
	a.Values[tracing.AgentLogicalNodeID] = logical
	a.Values[tracing.AgentTypeField] = uint64(typ)
	a.Values[tracing.AgentLogicalNodeTypeID] = typeIdx
	a.Name, a.VendorName, a.ProductName, a.ModelName = name, "AMD", "Test "+name, name
	return a
}
