package otf2

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// otf2Event is one ENTER or LEAVE, batched so that a few thousand events
// cost one cgo call.
type otf2Event struct {
	Loc      uint64
	Time     uint64
	Region   uint32
	Leave    uint32
	Category uint32 // index in otf2Trace.categories, the string the event's attribute 0 names
	_        uint32
}

const otf2Batch = 4096

// otf2Location is a location definition: a host thread's stream of one
// category, or a device queue/stream.
type otf2Location struct {
	name    string
	group   uint32
	events  uint64
	pending otf2Heap // events not yet written, earliest first
	last    uint64   // time of the last event written
	clamped uint64   // events that arrived later than the reorder window allowed
}

// OTF2 requires each location's timestamps to be non-decreasing, but the
// spool holds records in completion order (a call ends after the calls it
// made). Each location reorders through a bounded heap; an event older than
// one already written (only possible after otf2Window later events) is
// moved to the last written time.
const otf2Window = 16 * 1024

type otf2Heap []otf2Event

func (h otf2Heap) less(i, j int) bool {
	if h[i].Time != h[j].Time {
		return h[i].Time < h[j].Time
	}
	return h[i].Leave > h[j].Leave // a region ends before the next one starts
}

func (h *otf2Heap) push(e otf2Event) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *otf2Heap) pop() otf2Event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s.less(l, m) {
			m = l
		}
		if r < n && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// otf2Trace collects what the global definitions need while events stream
// into the archive: only names, never events.
type otf2Trace struct {
	a         otf2Archive
	regions   map[string]uint32 // category + "\x00" + name → region
	regionDef []otf2Region
	locs      map[string]uint64
	locDefs   []otf2Location
	groups    []string
	batch     []otf2Event
	begin     uint64
	end       uint64
	// categories are the tracing categories events carry in their
	// "category" attribute, as rocprofv3's do: strings 0..n-1 of the
	// archive.
	categories []string
}

type otf2Region struct {
	name, category string
	categoryID     uint32
}

func (t *otf2Trace) region(category, name string) uint32 {
	key := category + "\x00" + name
	if id, ok := t.regions[key]; ok {
		return id
	}
	id := uint32(len(t.regionDef))
	t.regions[key] = id
	cat := slices.Index(t.categories, category)
	if cat < 0 {
		cat = len(t.categories)
		t.categories = append(t.categories, category)
	}
	t.regionDef = append(t.regionDef, otf2Region{name, category, uint32(cat)})
	return id
}

func (t *otf2Trace) location(group uint32, name string) uint64 {
	key := fmt.Sprintf("%d\x00%s", group, name)
	if id, ok := t.locs[key]; ok {
		return id
	}
	id := uint64(len(t.locDefs))
	t.locs[key] = id
	t.locDefs = append(t.locDefs, otf2Location{name: name, group: group})
	return id
}

// slice records one region visit.
func (t *otf2Trace) slice(loc uint64, region uint32, start, end uint64) error {
	if end < start {
		end = start
	}
	if t.begin == 0 || start < t.begin {
		t.begin = start
	}
	if end > t.end {
		t.end = end
	}
	l := &t.locDefs[loc]
	l.events += 2
	cat := t.regionDef[region].categoryID
	l.pending.push(otf2Event{Loc: loc, Time: start, Region: region, Category: cat})
	l.pending.push(otf2Event{Loc: loc, Time: end, Region: region, Leave: 1, Category: cat})
	for len(l.pending) > otf2Window {
		if err := t.out(l, l.pending.pop()); err != nil {
			return err
		}
	}
	return nil
}

// out queues an event for the archive in its location's order.
func (t *otf2Trace) out(l *otf2Location, e otf2Event) error {
	if e.Time < l.last {
		e.Time = l.last
		l.clamped++
	}
	l.last = e.Time
	t.batch = append(t.batch, e)
	if len(t.batch) >= otf2Batch {
		return t.flush()
	}
	return nil
}

// otf2LocationCloser is the cgo archive's (a build without cgo writes no
// OTF2 at all).
type otf2LocationCloser interface{ closeLocation(loc uint64) error }

// drain writes every location's pending events, closing each location's
// event writer after its last event (see rpg_otf2_close_writer).
func (t *otf2Trace) drain() error {
	for i := range t.locDefs {
		l := &t.locDefs[i]
		for len(l.pending) > 0 {
			if err := t.out(l, l.pending.pop()); err != nil {
				return err
			}
		}
		l.pending = nil
		if err := t.flush(); err != nil {
			return err
		}
		if c, ok := any(t.a).(otf2LocationCloser); ok {
			if err := c.closeLocation(uint64(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *otf2Trace) flush() error {
	if len(t.batch) == 0 {
		return nil
	}
	err := t.a.events(t.batch)
	t.batch = t.batch[:0]
	return err
}

// Write writes an OTF2 archive: path + ".otf2" (the anchor file) and
// the directory path/. Regions are function, kernel, copy and allocation
// names; locations are per process, host thread and category for API
// calls, per agent and queue for kernels and per destination agent for
// copies. ROCTx marks (instants) are not encoded, as rocprofv3 does not.
//
// The OTF2 library is loaded here, on first use, before anything at path is
// touched: without it the error (an *OTF2LibraryError, matching
// ErrOTF2Unavailable) says which package to install, and no file is
// created or removed.
//
// The library names its own files, so the archive is written into a
// private temporary directory beside path (an atomicfile.Stage) and its
// entries are renamed into place only when every write and close
// succeeded, the anchor file last: a failed archive leaves nothing under
// path, and a symlink planted at any of its names is replaced, never
// followed.
func Write(path string, in *model.Input) error {
	if err := loadOTF2(); err != nil {
		return err
	}
	stage, err := atomicfile.NewStage(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer stage.Abort()
	name := filepath.Base(path)
	a, err := openOTF2(stage.Dir(), name)
	if err != nil {
		return err
	}
	t := &otf2Trace{a: a, regions: map[string]uint32{}, locs: map[string]uint64{}}
	err = in.OpenEach(func(p *model.Catalogue, r *model.SpoolView) error {
		group := uint32(len(t.groups))
		t.groups = append(t.groups, fmt.Sprintf("process %d (%s)", p.Info.PID, p.Info.Hostname))
		return t.writeProcess(group, p, r)
	})
	if err == nil {
		err = t.drain()
	}
	if err == nil {
		err = a.definitions(t)
	}
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return stage.Commit(name, name+".def", name+".otf2")
}

func (t *otf2Trace) writeProcess(group uint32, p *model.Catalogue, r *model.SpoolView) error {
	host := func(cat string, tid uint32) uint64 {
		return t.location(group, fmt.Sprintf("%s thread %d", cat, tid))
	}
	for r.Next() {
		var err error
		switch r.Kind() {
		case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
			a := r.APICall()
			cat := model.Domains[model.KindDomain(r.Kind())].Category
			err = t.slice(host(cat, a.TID), t.region(cat, p.FuncName(a.Domain, a.Function)), a.Start, a.End)
		case tracing.KindMarker:
			m := r.Marker()
			if m.Start == m.End {
				continue
			}
			cat := model.Domains[model.DomMarker].Category
			err = t.slice(host(cat, m.TID), t.region(cat, model.MarkerName(&m)), m.Start, m.End)
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			cat := model.Domains[model.DomKernel].Category
			loc := t.location(group, fmt.Sprintf("%s %s queue %d", cat, p.AgentLabel(d.AgentNode, " "), d.QueueID))
			err = t.slice(loc, t.region(cat, p.DispatchName(&d)), d.Start, d.End)
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			cat := model.Domains[model.DomCopy].Category
			loc := t.location(group, fmt.Sprintf("%s to %s", cat, p.AgentLabel(c.DstAgentNode, " ")))
			err = t.slice(loc, t.region(cat, c.Direction.String()), c.Start, c.End)
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			cat := model.Domains[model.DomAlloc].Category
			err = t.slice(host(cat, a.TID), t.region(cat, a.Operation.String()), a.Start, a.End)
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			cat := model.Domains[model.DomScratch].Category
			err = t.slice(host(cat, s.TID), t.region(cat, s.Operation.String()), s.Start, s.End)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
