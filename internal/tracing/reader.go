package tracing

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
)

// Stats counts what a reader saw in one spool.
type Stats struct {
	Records uint64           // published records returned
	ByKind  [kindLast]uint64 // published records per kind
	Torn    uint64           // records reserved but never published (rejected)
	Invalid uint64           // chunks abandoned at a malformed record
	Skipped uint64           // published records of unknown kinds or versions
	Chunks  uint64           // chunks holding records
}

// Count returns the published records of one kind.
func (s *Stats) Count(k Kind) uint64 {
	if k < kindLast {
		return s.ByKind[k]
	}
	return 0
}

// Reader streams the published records of one spool. It holds no records
// itself: byte slices in decoded records alias the spool's memory and stay
// valid until Close.
type Reader struct {
	data    []byte
	info    ProcessInfo
	nchunks uint64
	unmap   bool

	released uint64 // chunks below this were dropped from the page tables
	guard    int    // the fault guard's slot for the mapping (-1: none)
	size     int64  // the file's size when mapped

	chunk uint64   // current chunk index
	off   int      // offset of the next record inside the chunk; 0 = chunk not entered
	tid   uint32   // the current chunk's writer at this point (header, then THREAD records)
	clock tscClock // the current chunk's last CLOCK record
	rec   []byte
	kind  Kind
	// form is rec's format byte as Next validated it: the record's bytes
	// may read differently later (its page cut off by a truncation and
	// zero-filled by the fault guard, or rewritten by the file's owner),
	// and the decoders must follow the format whose sizes were checked.
	form  byte
	stats Stats

	hidden uint32 // bit k: Next skips records of kind k (Hide)
}

// Open maps a spool file read-only. Only a regular file is a spool: a FIFO
// or device named like one (planted in a directory, or left by a crash) is
// not waited on or read, and a symlink is not followed.
func Open(path string) (*Reader, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("open spool %s: a symbolic link: %w", path, ErrNotSpool)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("open spool %s: not a regular file (%s): %w", path, st.Mode().Type(), ErrNotSpool)
	}
	if st.Size() < ChunkSize {
		return nil, fmt.Errorf("open spool %s: %d bytes, shorter than a spool's header: %w", path, st.Size(), ErrNotSpool)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map spool %s: %w", path, err)
	}
	r, err := NewReader(data)
	if err != nil {
		_ = syscall.Munmap(data)
		return nil, fmt.Errorf("open spool %s: %w", path, err)
	}
	r.unmap = true
	r.info.Path = path
	r.size = st.Size()
	// A file cut short while mapped would fault: the guard turns the
	// missing part into zeros (no records) and says so (Close, TornSpools).
	r.guard = watchMapping(data)
	return r, nil
}

// NewReader reads a spool held in memory.
func NewReader(data []byte) (*Reader, error) {
	r := &Reader{data: data, guard: -1}
	if len(data) < ChunkSize {
		return nil, fmt.Errorf("%d bytes, shorter than a spool's header: %w", len(data), ErrNotSpool)
	}
	if err := decodeHeader(data[:ChunkSize], &r.info); err != nil {
		return nil, err
	}
	r.nchunks = uint64(len(data) / ChunkSize)
	if r.info.ChunksReserved < r.nchunks {
		r.nchunks = r.info.ChunksReserved
	}
	r.Rewind()
	return r, nil
}

// Close releases the spool's memory; records decoded from it become
// invalid. A spool whose file was cut short while it was read returns a
// *TornSpoolError (and is listed by TornSpools).
func (r *Reader) Close() error {
	if r.unmap && r.data != nil {
		at := unwatchMapping(r.guard)
		r.guard = -1
		err := syscall.Munmap(r.data)
		r.data = nil
		if at >= 0 {
			return noteTorn(r.info.Path, at, r.size, r.nchunks-min(r.nchunks, uint64(at)/ChunkSize))
		}
		return err
	}
	r.data = nil
	return nil
}

// TornSpoolError is a spool whose file was cut short (truncated, by its
// owner or by whoever else could write it) while it was read: what lay
// past At could not be read, and its records are lost to every output
// made from it. The reader that read it returns it from Close, and so does
// every function that reads spools for an output (output.Write, and the
// run or conversion that called it): the loss reaches the caller as an
// error, never only as a note.
type TornSpoolError struct {
	Path     string
	At, Size int64
	// LostChunks are the spool's chunks from the one At lies in to its
	// end: every record in them (up to a chunk's worth each) is lost.
	LostChunks uint64
	seq        uint64 // when it was last noted (TornSince)
	reported   bool   // returned by TornSince to a caller
}

func (e *TornSpoolError) Error() string {
	return fmt.Sprintf("spool %s was cut short (truncated by its owner or another process) while it was read: "+
		"its records from byte %d on (of %d; %d chunks, up to %d KiB of records each) are lost and the outputs made from it are incomplete; convert an intact copy of it again",
		e.Path, e.At, e.Size, e.LostChunks, ChunkSize>>10)
}

var (
	tornMu  sync.Mutex
	torn    []*TornSpoolError
	tornSeq uint64
)

// noteTorn records a torn spool once (the lowest offset seen).
func noteTorn(path string, at, size int64, lost uint64) *TornSpoolError {
	tornMu.Lock()
	defer tornMu.Unlock()
	tornSeq++
	for _, t := range torn {
		if t.Path == path {
			if at < t.At {
				t.At, t.LostChunks = at, max(t.LostChunks, lost)
			}
			t.seq, t.reported = tornSeq, false
			return t
		}
	}
	t := &TornSpoolError{Path: path, At: at, Size: size, LostChunks: lost, seq: tornSeq}
	torn = append(torn, t)
	return t
}

// TornMark marks the spools found cut short so far: TornSince(mark, ...)
// returns those found after it.
func TornMark() uint64 {
	tornMu.Lock()
	defer tornMu.Unlock()
	return tornSeq
}

// TornSince returns the spools among paths that a reader found cut short
// after mark (TornMark), as one error (nil when none): a function that
// read the spools through readers it closed without looking returns it,
// so that its caller learns of the loss. They count as reported
// (UnreportedTornSpools no longer lists them).
func TornSince(mark uint64, paths []string) error {
	tornMu.Lock()
	defer tornMu.Unlock()
	var errs []error
	for _, t := range torn {
		if t.seq > mark && slices.Contains(paths, t.Path) {
			t.reported = true
			errs = append(errs, t)
		}
	}
	return errors.Join(errs...)
}

// OnlyTorn reports whether err is nothing but spools cut short while read
// (a *TornSpoolError, or several joined): what was read was written, and
// the loss is the error.
func OnlyTorn(err error) bool {
	if err == nil {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !OnlyTorn(e) {
				return false
			}
		}
		return true
	}
	_, ok := err.(*TornSpoolError)
	return ok
}

// TornSpools lists the spools this process found cut short while it read
// them.
func TornSpools() []*TornSpoolError {
	tornMu.Lock()
	defer tornMu.Unlock()
	return append([]*TornSpoolError(nil), torn...)
}

// UnreportedTornSpools lists the spools found cut short that no function
// returned to its caller (TornSince): a reader whose error was dropped.
// The CLI fails on them, naming them, as a last resort.
func UnreportedTornSpools() []*TornSpoolError {
	tornMu.Lock()
	defer tornMu.Unlock()
	var out []*TornSpoolError
	for _, t := range torn {
		if !t.reported {
			out = append(out, t)
		}
	}
	return out
}

// Process returns the header's process description.
func (r *Reader) Process() ProcessInfo { return r.info }

// Stats returns the counts of the records read so far (complete after Next
// has returned false).
func (r *Reader) Stats() Stats { return r.stats }

// Rewind starts the record stream again (for a second pass); counts restart.
func (r *Reader) Rewind() {
	r.chunk, r.off, r.rec, r.kind, r.released = 1, 0, nil, 0, 1
	r.stats = Stats{}
}

// Hide makes Next pass over records of kind k, from now on and after a
// Rewind; they still count in Stats. The writers hide the markers a run
// recorded only to rename kernels (--kernel-rename without --marker-trace)
// once they have read them.
func (r *Reader) Hide(k Kind) {
	if k < 32 {
		r.hidden |= 1 << k
	}
}

// Next advances to the next published record of a known kind.
func (r *Reader) Next() bool {
	for r.chunk < r.nchunks {
		base := int(r.chunk) * ChunkSize
		c := r.data[base : base+ChunkSize]
		if r.off == 0 {
			if !isChunkHeader(c, r.chunk) {
				r.nextChunk()
				continue
			}
			r.stats.Chunks++
			r.off = ChunkHeaderSize
			r.tid = le.Uint32(c[4:])
			r.clock = tscClock{}
		}
		if r.off+RecordHeaderSize > ChunkSize {
			r.nextChunk()
			continue
		}
		size := le.Uint32(c[r.off:])
		if size == 0 {
			r.nextChunk()
			continue
		}
		if size%8 != 0 || size < RecordHeaderSize || uint64(r.off)+uint64(size) > ChunkSize {
			r.stats.Invalid++
			r.nextChunk()
			continue
		}
		rec := c[r.off : r.off+int(size) : r.off+int(size)]
		r.off += int(size)
		if rec[7] != commitByte {
			r.stats.Torn++
			continue
		}
		k := Kind(le.Uint16(rec[4:]))
		if k == 0 || k >= kindLast {
			r.stats.Skipped++
			continue
		}
		form := rec[6] // read once: what the checks below and the decoders follow
		switch {
		case form == 1:
			fixed := fixedSize[k]
			if size < fixed || uint64(fixed)+tailLen(k, rec) > uint64(size) {
				r.stats.Invalid++
				r.nextChunk()
				continue
			}
		case (form == 2 || form == 3) && (k == KindHIPAPI || k == KindHSAAPI || k == KindRCCLAPI):
			if size < apiCompactSize || apiCompactSize+uint32(rec[11]) > size {
				r.stats.Invalid++
				r.nextChunk()
				continue
			}
			if form == 3 && !r.clock.ok {
				// Ticks with nothing to convert them: the writer always puts a
				// clock record first, so this spool is damaged.
				r.stats.Invalid++
				continue
			}
		case form == pcSampleVersion && k == KindPCSample:
			if size < pcSampleRecSize || pcSampleRecSize+tailLen(k, rec) > uint64(size) {
				r.stats.Invalid++
				r.nextChunk()
				continue
			}
		default:
			r.stats.Skipped++
			continue
		}
		if k == kindThread {
			r.tid = le.Uint32(rec[8:])
			continue
		}
		if k == kindClock {
			r.clock = decodeClock(rec)
			continue
		}
		r.stats.Records++
		r.stats.ByKind[k]++
		if r.hidden&(1<<k) != 0 {
			continue
		}
		r.rec, r.kind, r.form = rec, k, form
		return true
	}
	r.rec, r.kind = nil, 0
	if at := tornAt(r.guard); at >= 0 {
		noteTorn(r.info.Path, at, r.size, r.nchunks-min(r.nchunks, uint64(at)/ChunkSize))
	}
	return false
}

// releaseEvery is how many chunks (4 MiB) are read before the reader drops
// them from its page tables: spools are read once, front to back, and a
// mapping that kept every page would make the reader's RSS the spool's size.
const releaseEvery = 64

func (r *Reader) nextChunk() {
	r.chunk++
	r.off = 0
	if r.unmap && r.chunk-r.released >= releaseEvery {
		// Only page-table entries go: the data stays in the page cache, and
		// slices into it fault back in if used again.
		_ = syscall.Madvise(r.data[r.released*ChunkSize:r.chunk*ChunkSize], syscall.MADV_DONTNEED)
		r.released = r.chunk
	}
}

// Kind returns the current record's kind.
func (r *Reader) Kind() Kind { return r.kind }

// Bytes returns the current record, header included.
func (r *Reader) Bytes() []byte { return r.rec }

// The accessors decode the current record; each must match Kind().

// String decodes a KindString record.
func (r *Reader) String() String { return decodeString(r.rec) }

// APICall decodes a KindHIPAPI, KindHSAAPI or KindRCCLAPI record (for the
// last, Args holds the RCCL tail and the parameters: see RCCLCall).
func (r *Reader) APICall() APICall { return decodeAPICallForm(r.rec, r.form, r.tid, &r.clock) }

// RCCLCall decodes a KindRCCLAPI record.
func (r *Reader) RCCLCall() RCCLCall { return DecodeRCCLCall(r.APICall()) }

// Marker decodes a KindMarker record.
func (r *Reader) Marker() Marker { return decodeMarker(r.rec) }

// KernelDispatch decodes a KindKernelDispatch record.
func (r *Reader) KernelDispatch() KernelDispatch { return decodeKernelDispatch(r.rec) }

// MemoryCopy decodes a KindMemoryCopy record.
func (r *Reader) MemoryCopy() MemoryCopy { return decodeMemoryCopy(r.rec) }

// MemoryAllocation decodes a KindMemoryAllocation record.
func (r *Reader) MemoryAllocation() MemoryAllocation { return decodeMemoryAllocation(r.rec) }

// ScratchMemory decodes a KindScratchMemory record.
func (r *Reader) ScratchMemory() ScratchMemory { return decodeScratchMemory(r.rec) }

// KernelSymbol decodes a KindKernelSymbol record.
func (r *Reader) KernelSymbol() KernelSymbol { return decodeKernelSymbol(r.rec) }

// CodeObject decodes a KindCodeObject record.
func (r *Reader) CodeObject() CodeObject { return decodeCodeObject(r.rec) }

// AgentInfo decodes a KindAgentInfo record.
func (r *Reader) AgentInfo() AgentInfo { return decodeAgentInfo(r.rec) }

// CounterSample decodes a KindCounterSample record.
func (r *Reader) CounterSample() CounterSample { return decodeCounterSample(r.rec) }

// SpoolPattern matches the spool files in a spool directory (a file
// name, never a path: see List).
const SpoolPattern = "rpg-*.spool"

// List returns the spool files in dir, oldest process image first (by the
// start time in their names, then name). The names are read from the open
// directory and matched alone: dir is never part of a pattern, so a `[`,
// `*` or `\` in it (an output or spool path the user chose) is only a
// character of a name.
func List(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("spool directory: %w", err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("spool directory %s: %w", dir, err)
	}
	var paths []string
	for _, n := range names {
		if ok, _ := filepath.Match(SpoolPattern, n); ok {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	key := func(p string) (uint64, string) {
		var pid int
		var ts uint64
		var n int
		base := filepath.Base(p)
		if _, err := fmt.Sscanf(base, "rpg-%d-%d-%d.spool", &pid, &ts, &n); err != nil {
			return 0, base
		}
		return ts, base
	}
	sort.Slice(paths, func(i, j int) bool {
		ti, ni := key(paths[i])
		tj, nj := key(paths[j])
		if ti != tj {
			return ti < tj
		}
		return ni < nj
	})
	return paths, nil
}
