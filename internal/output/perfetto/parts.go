package perfetto

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Trace processor, and so the Perfetto UI, reads a trace into buffers
// sized in 32 bits: a trace of about 4 GB or more does not open. A trace
// that grows past the part size (Config.PerfettoPartBytes, default
// DefaultPartBytes) is written as parts, each a trace of its own that
// opens alone: a part ends at the first record boundary past the size
// (a record's slice is never split) and the next starts with its sequence's
// incremental state cleared, so its track descriptors and interned names
// are sent again as it uses them. Parts follow the writing order: each
// process in turn, its records in spool order, so a part holds a span of
// time of each process it covers (a thread's records come in time order).
//
// With --perfetto-buffer-size the cap is the whole trace's, counting the
// descriptors and names each part sends again: a capped trace in parts
// keeps a little less than one file would.
//
// A trace that fits is <prefix>_results.pftrace as before; one that does
// not is <prefix>_results.part-001.pftrace, part-002 and so on, and no
// results.pftrace. Together the parts hold what the single file would:
// the same events, tracks and names (TestPerfettoPartsUnionIsTheTrace).

// DefaultPartBytes is the part size when Config.PerfettoPartBytes is 0:
// half of what trace processor's 32-bit sizes allow, with room to spare for
// the record that ends a part.
const DefaultPartBytes = 2 << 30

// Part is one file of a trace written by WriteFile, with the records of
// rocprofv3's domains whose packets it holds.
type Part struct {
	Path    string
	Records uint64
}

// PartPath names part n (from 1) of the trace whose single file is path.
func PartPath(path string, n int) string {
	return fmt.Sprintf("%s.part-%03d.pftrace", strings.TrimSuffix(path, ".pftrace"), n)
}

// partFiles is the files of one trace: parts in order, each under a
// temporary name until every one is written (atomicfile).
type partFiles struct {
	path    string
	files   []*atomicfile.File
	records []uint64
	bytes   uint64 // written to the current file
}

func (s *partFiles) Write(p []byte) (int, error) {
	n, err := s.files[len(s.files)-1].Write(p)
	s.bytes += uint64(n)
	return n, err
}

// next starts the next part; the first part takes its part name.
func (s *partFiles) next() error {
	if len(s.files) == 1 {
		if err := s.files[0].Rename(PartPath(s.path, 1)); err != nil {
			return err
		}
	}
	f, err := atomicfile.Create(PartPath(s.path, len(s.files)+1), atomicfile.Public)
	if err != nil {
		return err
	}
	s.files = append(s.files, f)
	s.records = append(s.records, 0)
	s.bytes = 0
	return nil
}

// WriteFile writes the trace at path, or as parts beside it when it grows
// past the part size, and returns the files. Nothing is at their names
// unless every part was written.
func WriteFile(path string, in *model.Input) ([]Part, error) {
	f, err := atomicfile.Create(path, atomicfile.Public)
	if err != nil {
		return nil, err
	}
	s := &partFiles{path: path, files: []*atomicfile.File{f}, records: []uint64{0}}
	limit := in.Config.PerfettoPartBytes
	if limit == 0 {
		limit = DefaultPartBytes
	}
	if in.Config.PerfettoBufferBytes > 0 {
		err = writeCapped(s, in, &partLimit{files: s, limit: limit})
	} else {
		err = writeTrace(s, in, nil, &partLimit{files: s, limit: limit})
	}
	for _, f := range s.files {
		if err != nil {
			f.Abort()
		} else {
			err = f.Commit()
		}
	}
	if err != nil {
		return nil, err
	}
	parts := make([]Part, len(s.files))
	for i, f := range s.files {
		parts[i] = Part{Path: f.Path(), Records: s.records[i]}
	}
	return parts, nil
}

// partLimit is what a writer writing parts knows of them.
type partLimit struct {
	files *partFiles
	limit uint64
}

// record counts a record of rocprofv3's domains (as the catalogue counts
// them, model.Catalogue.Counts) in the current part; under a cap, in the
// part that keeps its bundle (keep).
func (pw *perfettoWriter) record(k tracing.Kind, hideMarkers bool) {
	if pw.parts == nil || model.KindDomain(k) < 0 || k == tracing.KindMarker && hideMarkers {
		return
	}
	if pw.cap != nil {
		pw.cap.domainRecords++
		return
	}
	pw.parts.files.records[len(pw.parts.files.records)-1]++
}

// keep counts a kept bundle's records in the current part.
func (pw *perfettoWriter) keep(n uint64) {
	if pw.parts != nil {
		pw.parts.files.records[len(pw.parts.files.records)-1] += n
	}
}

// partBoundary is called between records: past the part size, the next
// record starts a new part, with the trace's incremental state (track
// descriptors sent, interned names) cleared: pw.part tells the callers
// that cache tracks to forget them.
func (pw *perfettoWriter) partBoundary() {
	p := pw.parts
	if p == nil || pw.err != nil || p.files.bytes+uint64(pw.w.Buffered()) < p.limit {
		return
	}
	if err := pw.w.Flush(); err != nil {
		pw.err = err
		return
	}
	if err := p.files.next(); err != nil {
		pw.err = err
		return
	}
	pw.w = bufio.NewWriterSize(p.files, 1<<20)
	clear(pw.tracks)
	clear(pw.cats)
	clear(pw.names)
	clear(pw.annNames)
	pw.interned = pw.interned[:0]
	pw.first = true
	if pw.cap != nil {
		pw.cap.firstAtStart = true
	}
	pw.part++
}
