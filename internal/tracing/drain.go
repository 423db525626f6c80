package tracing

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Stop words of the spool header (rpg_spool_header.stop, RPG_STOP_*): set by
// the CLI, obeyed by a writer that seals its chunks (HeaderSeals) by taking
// no new chunk, so that its records count in the header's dropped.
const (
	// StopShmShare: the run's share of /dev/shm is used up; cleared once
	// the drain has freed enough of it.
	StopShmShare uint32 = 1
	// StopOutputFull: the output file system would be filled; for good.
	StopOutputFull uint32 = 2
)

const (
	stopOffset     = 120 // rpg_spool_header.stop
	seenOffset     = 124 // rpg_spool_header.stop_seen
	limitOffset    = 128 // rpg_spool_header.chunk_limit
	reservedOffset = 64  // rpg_spool_header.chunks_reserved
	flagsOffset    = 108 // rpg_spool_header.flags
)

// Drainer moves a spool that is being written, chunk by chunk, from a file
// system in memory (/dev/shm) to a spool file of the same layout elsewhere
// (the output file system): each chunk its writer sealed (ChunkSealed:
// every record in it published, none to come) is copied to the same
// offset of the destination and punched out of the source
// (FALLOC_FL_PUNCH_HOLE, which gives a tmpfs file's pages back), so the
// source holds only the chunks still being written. Finish copies those
// and the header once every writer is gone, and removes the source: the
// destination is then the whole spool, read like any other.
//
// A Drainer is used by one goroutine.
type Drainer struct {
	Src, Dst string
	src, dst *os.File
	hdr      []byte // the source's first page, mapped shared: stop, chunks_reserved
	drained  []uint64
	low      uint64 // every chunk below is drained (or chunk 0)
	// Bytes are the bytes drained so far (64 KiB a chunk), Chunks the
	// chunks.
	Bytes  int64
	Chunks uint64
	// TailBytes are the bytes Finish moved.
	TailBytes int64
	seals     bool
	steps     int
}

// refreshHeaderSteps: every how many steps the destination's header is
// copied again.
const refreshHeaderSteps = 64

// hdrCopy reads the source's header chunk.
func (d *Drainer) hdrCopy() []byte {
	buf := make([]byte, ChunkSize)
	n, _ := d.src.ReadAt(buf, 0)
	return buf[:n]
}

// ErrNotReady is OpenDrainer's answer for a spool file whose writer has
// not finished creating it (no magic yet): try again later.
var ErrNotReady = errors.New("spool not created completely yet")

// OpenDrainer opens the spool src for draining into dst, a new file
// (O_EXCL, mode 0600). A spool whose writer does not seal its chunks
// (HeaderSeals) is drained only by Finish.
func OpenDrainer(src, dst string) (*Drainer, error) {
	return OpenDrainerTo(src, dst, func() (*os.File, error) {
		return os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	})
}

// OpenDrainerTo is OpenDrainer with the destination dst created by create
// (through a verified directory's descriptor), once src is a spool.
func OpenDrainerTo(src, dst string, create func() (*os.File, error)) (*Drainer, error) {
	s, err := os.OpenFile(src, os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	// The magic is stored last: a file without it (or still without its
	// first segment) is not mapped, which would fault.
	var magic [8]byte
	if n, _ := s.ReadAt(magic[:], 0); n < 8 || le.Uint64(magic[:]) != SpoolMagic {
		s.Close()
		return nil, ErrNotReady
	}
	hdr, err := unix.Mmap(int(s.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("mapping %s: %w", src, err)
	}
	d, err := create()
	if err != nil {
		unix.Munmap(hdr)
		s.Close()
		return nil, err
	}
	flags := atomic.LoadUint32((*uint32)(unsafe.Pointer(&hdr[flagsOffset])))
	return &Drainer{Src: src, Dst: dst, src: s, dst: d, hdr: hdr, low: 1, seals: flags&HeaderSeals != 0}, nil
}

func (d *Drainer) stopWord() *uint32 { return (*uint32)(unsafe.Pointer(&d.hdr[stopOffset])) }

// SetStop sets bits of the header's stop word (the writers see it at their
// next chunk).
func (d *Drainer) SetStop(bits uint32) {
	w := d.stopWord()
	for {
		old := atomic.LoadUint32(w)
		if old&bits == bits || atomic.CompareAndSwapUint32(w, old, old|bits) {
			return
		}
	}
}

// ClearStop clears bits of the header's stop word.
func (d *Drainer) ClearStop(bits uint32) {
	w := d.stopWord()
	for {
		old := atomic.LoadUint32(w)
		if old&bits == 0 || atomic.CompareAndSwapUint32(w, old, old&^bits) {
			return
		}
	}
}

// Stop is the header's stop word.
func (d *Drainer) Stop() uint32 { return atomic.LoadUint32(d.stopWord()) }

// StopSeen are the stop bits a writer obeyed so far (StopShmShare: it
// reached the chunk limit).
func (d *Drainer) StopSeen() uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&d.hdr[seenOffset])))
}

// Limit lets the writers hold at most n chunks in the source besides the
// header: the chunk limit is set n chunks past what was drained. The
// chunks still open count in n, and so do the pages the writers prepare
// ahead (never past the limit). 0 lifts the limit.
func (d *Drainer) Limit(n uint64) {
	v := uint64(0)
	if n > 0 {
		v = 1 + d.Chunks + n
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&d.hdr[limitOffset])), v)
}

// Seals reports whether the spool's writer seals its chunks.
func (d *Drainer) Seals() bool { return d.seals }

func (d *Drainer) reserved() uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&d.hdr[reservedOffset])))
}

func (d *Drainer) isDrained(c uint64) bool {
	i := c / 64
	return i < uint64(len(d.drained)) && d.drained[i]&(1<<(c%64)) != 0
}

func (d *Drainer) markDrained(c uint64) {
	i := c / 64
	for uint64(len(d.drained)) <= i {
		d.drained = append(d.drained, 0)
	}
	d.drained[i] |= 1 << (c % 64)
}

// Allocated is the source's size in memory (its allocated blocks).
func (d *Drainer) Allocated() int64 {
	var st unix.Stat_t
	if unix.Fstat(int(d.src.Fd()), &st) != nil {
		return 0
	}
	return st.Blocks * 512
}

// Step drains every chunk sealed since the last step and returns the bytes
// it drained. An error is the destination's (ENOSPC...): the chunk it was
// copying stays in the source, whole.
func (d *Drainer) Step() (int64, error) {
	if !d.seals {
		return 0, nil
	}
	n := d.reserved()
	if d.steps++; d.steps%refreshHeaderSteps == 1 {
		// The copy's header, so that a copy whose drainer was killed
		// reads as a spool, its counters as of a moment ago (a chunk
		// headed since and never drained reads as lost, not missing).
		if _, err := d.dst.WriteAt(d.hdrCopy(), 0); err != nil {
			return 0, fmt.Errorf("draining %s to %s: %w", d.Src, d.Dst, err)
		}
	}
	var h [ChunkHeaderSize]byte
	buf := make([]byte, ChunkSize)
	var moved int64
	for c := d.low; c < n; c++ {
		if d.isDrained(c) {
			if c == d.low {
				d.low++
			}
			continue
		}
		off := int64(c) * ChunkSize
		if k, err := d.src.ReadAt(h[:], off); k < len(h) || err != nil {
			break // past the file's end: not grown yet
		}
		if le.Uint32(h[:]) != ChunkSealed || le.Uint64(h[8:]) != c {
			continue
		}
		if k, err := d.src.ReadAt(buf, off); k < len(buf) || err != nil {
			break
		}
		if _, err := d.dst.WriteAt(buf, off); err != nil {
			return moved, fmt.Errorf("draining %s to %s: %w", d.Src, d.Dst, err)
		}
		if err := unix.Fallocate(int(d.src.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, ChunkSize); err != nil {
			return moved, fmt.Errorf("freeing a drained chunk of %s: %w", d.Src, err)
		}
		d.markDrained(c)
		d.Chunks++
		d.Bytes += ChunkSize
		moved += ChunkSize
		if c == d.low {
			d.low++
		}
	}
	return moved, nil
}

// Finish copies what is left of the source (the header chunk and every
// chunk not drained: the ones still open when the writers ended, and
// those past the stop) to the destination, gives it the source's size and
// removes the source. Only once no process writes the spool any more. On
// an error the source stays, and the destination is removed only when
// nothing was drained into it (else both are needed: the error says so).
func (d *Drainer) Finish() error {
	defer d.close()
	st, err := d.src.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	buf := make([]byte, ChunkSize)
	zero := make([]byte, ChunkSize)
	nchunks := uint64(size+ChunkSize-1) / ChunkSize
	copyChunk := func(c uint64) error {
		off := int64(c) * ChunkSize
		k, err := d.src.ReadAt(buf, off)
		if k == 0 && err != nil {
			return nil
		}
		if bytes.Equal(buf[:k], zero[:k]) && c != 0 {
			return nil // never written, or punched: a hole in the copy too
		}
		if _, err := d.dst.WriteAt(buf[:k], off); err != nil {
			return err
		}
		d.TailBytes += int64(k)
		return nil
	}
	for c := uint64(1); c < nchunks; c++ {
		if d.isDrained(c) {
			continue
		}
		if err := copyChunk(c); err != nil {
			return d.fail(err)
		}
	}
	// The header last: its counters (dropped, chunks_headed) are final
	// now, and a copy cut short is no spool until it is there.
	if err := copyChunk(0); err != nil {
		return d.fail(err)
	}
	if err := d.dst.Truncate(size); err != nil {
		return d.fail(err)
	}
	if err := os.Remove(d.Src); err != nil {
		return err
	}
	return nil
}

func (d *Drainer) fail(err error) error {
	if d.Chunks == 0 {
		os.Remove(d.Dst)
		return fmt.Errorf("copying %s to %s: %w", d.Src, d.Dst, err)
	}
	return fmt.Errorf("copying the rest of %s to %s, which holds its first %d chunks: %w (both are needed)", d.Src, d.Dst, d.Chunks, err)
}

// Close releases the drainer without finishing (both files stay).
func (d *Drainer) Close() { d.close() }

func (d *Drainer) close() {
	if d.hdr != nil {
		unix.Munmap(d.hdr)
		d.hdr = nil
	}
	if d.src != nil {
		d.src.Close()
		d.src = nil
	}
	if d.dst != nil {
		d.dst.Close()
		d.dst = nil
	}
}
