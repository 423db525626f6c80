package spill

import (
	"container/heap"
	"fmt"
	"io"
	"os"
	"slices"
	"unsafe"
)

// DefaultRun is how many values a Sorter sorts in memory at a time.
const DefaultRun = 1 << 20

// Sorter sorts values of a fixed-size type without pointers, more than
// memory should hold: values are sorted in runs of at most Run values,
// each run written to a spill file once full, and the runs merged when
// read. Values cmp finds equal come out in the order they were added (the
// sort is stable). While everything fits one run nothing is written.
type Sorter[T any] struct {
	dir  *Dir
	cmp  func(a, b T) int
	run  int
	buf  []T
	file *os.File // the runs, one after another
	ends []int64  // each run's end, in values
	n    int64
}

// NewSorter sorts by cmp, in runs of run values (DefaultRun when 0).
func NewSorter[T any](d *Dir, run int, cmp func(a, b T) int) *Sorter[T] {
	if run <= 0 {
		run = DefaultRun
	}
	return &Sorter[T]{dir: d, cmp: cmp, run: run}
}

// Len is how many values were added.
func (s *Sorter[T]) Len() int64 { return s.n }

// Spilled reports whether some values went to disk.
func (s *Sorter[T]) Spilled() bool { return s.file != nil }

// Add adds a value.
func (s *Sorter[T]) Add(v T) error {
	if len(s.buf) == cap(s.buf) {
		// Grown to the run's size at most, never past it (append would
		// double it).
		s.buf = slices.Grow(s.buf, min(max(cap(s.buf), 4096), s.run-len(s.buf)))
	}
	s.buf = append(s.buf, v)
	s.n++
	if len(s.buf) >= s.run {
		return s.flush()
	}
	return nil
}

func (s *Sorter[T]) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	slices.SortStableFunc(s.buf, s.cmp)
	if s.file == nil {
		f, err := s.dir.create()
		if err != nil {
			return err
		}
		s.file = f
	}
	if _, err := s.file.Write(bytesOf(s.buf)); err != nil {
		return fmt.Errorf("writing a spill file: %w", err)
	}
	var last int64
	if len(s.ends) > 0 {
		last = s.ends[len(s.ends)-1]
	}
	s.ends = append(s.ends, last+int64(len(s.buf)))
	s.buf = s.buf[:0]
	return nil
}

// Close releases the sorter's file.
func (s *Sorter[T]) Close() error {
	s.buf = nil
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}

// Each calls fn with every value in order, then releases the sorter.
func (s *Sorter[T]) Each(fn func(T) error) error {
	defer s.Close()
	if s.file == nil {
		slices.SortStableFunc(s.buf, s.cmp)
		for _, v := range s.buf {
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.flush(); err != nil {
		return err
	}
	s.buf = nil
	var zero T
	size := int64(unsafe.Sizeof(zero))
	// Each run is read through its own buffer; the buffers take what one
	// run held in memory at most, shared out.
	per := max(64, min(s.run/len(s.ends), 1<<16))
	h := &runHeap[T]{cmp: s.cmp}
	var start int64
	for i, end := range s.ends {
		r := &runReader[T]{f: s.file, next: start * size, end: end * size, buf: make([]T, 0, per), idx: i}
		start = end
		ok, err := r.fill()
		if err != nil {
			return err
		}
		if ok {
			h.runs = append(h.runs, r)
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		r := h.runs[0]
		if err := fn(r.buf[r.at]); err != nil {
			return err
		}
		r.at++
		if r.at == len(r.buf) {
			ok, err := r.fill()
			if err != nil {
				return err
			}
			if !ok {
				heap.Pop(h)
				continue
			}
		}
		heap.Fix(h, 0)
	}
	return nil
}

// runReader reads one sorted run back.
type runReader[T any] struct {
	f         *os.File
	next, end int64 // byte offsets
	buf       []T
	at, idx   int
}

func (r *runReader[T]) fill() (bool, error) {
	if r.next >= r.end {
		return false, nil
	}
	var zero T
	size := int64(unsafe.Sizeof(zero))
	n := min(int64(cap(r.buf)), (r.end-r.next)/size)
	r.buf = r.buf[:n]
	b := bytesOf(r.buf)
	if _, err := r.f.ReadAt(b, r.next); err != nil && err != io.EOF {
		return false, fmt.Errorf("reading a spill file: %w", err)
	}
	r.next += int64(len(b))
	r.at = 0
	return true, nil
}

// runHeap orders the runs by their current value, then by run (earlier
// runs hold earlier-added values: the merge stays stable).
type runHeap[T any] struct {
	runs []*runReader[T]
	cmp  func(a, b T) int
}

func (h *runHeap[T]) Len() int { return len(h.runs) }
func (h *runHeap[T]) Less(i, j int) bool {
	a, b := h.runs[i], h.runs[j]
	if c := h.cmp(a.buf[a.at], b.buf[b.at]); c != 0 {
		return c < 0
	}
	return a.idx < b.idx
}
func (h *runHeap[T]) Swap(i, j int) { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *runHeap[T]) Push(x any)    { h.runs = append(h.runs, x.(*runReader[T])) }
func (h *runHeap[T]) Pop() any {
	r := h.runs[len(h.runs)-1]
	h.runs = h.runs[:len(h.runs)-1]
	return r
}
