package analysis

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// Scan streams the events of one run: a ROCpd database, a trace CSV file,
// or a run's directory (see Resolve).
func Scan(path string, fn func(*Event) error) error {
	src, err := Resolve(path)
	if err != nil {
		return err
	}
	return ScanSource(src, fn)
}

// ScanSource streams the events of a resolved run.
func ScanSource(src *Source, fn func(*Event) error) error {
	for _, p := range src.Databases {
		db, err := rocpdread.Open(p)
		if err != nil {
			return err
		}
		err = ScanDB(db, fn)
		db.Close()
		if err != nil {
			return err
		}
	}
	if len(src.CSVFiles) > 0 {
		root := src.Path
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			root = filepath.Dir(root)
		}
		return scanCSVFiles(root, src.CSVFiles, fn)
	}
	return nil
}

// DBProcess is a database's process (its rocpd_info_process row id) as
// ScanDB names it: the image's guid, with the pid when the image holds
// several processes (a merged one does not: each image is one).
func DBProcess(in *rocpdread.Info, pid int64) *Process {
	p := &Process{Key: in.Image.GUID, PID: in.PID(pid), Rank: -1}
	if len(in.Processes) > 1 {
		p.Key += "/" + fmt.Sprint(pid)
	}
	if ip, ok := in.Processes[pid]; ok {
		p.Hostname, p.Rank = ip.Hostname, ip.Rank
	}
	return p
}

// ScanDB streams every timed record of a ROCpd database.
func ScanDB(db *rocpdread.DB, fn func(*Event) error) error {
	// A name that is not UTF-8 (a database another tool wrote) is repaired
	// as the outputs repair it (model.ValidString).
	fn = validNames(fn)
	procs := map[string]map[int64]*Process{}
	proc := func(in *rocpdread.Info, pid int64) *Process {
		m := procs[in.Image.GUID]
		if m == nil {
			m = map[int64]*Process{}
			procs[in.Image.GUID] = m
		}
		if p, ok := m[pid]; ok {
			return p
		}
		p := DBProcess(in, pid)
		m[pid] = p
		return p
	}
	var ev Event
	err := db.KernelTimings(func(in *rocpdread.Info, t *rocpdread.KernelTiming) error {
		ev = Event{Domain: Kernel, Name: t.Name, Start: t.Start, End: t.End, Process: proc(in, t.PID), Bytes: -1,
			Launch: Launch{Grid: t.Grid, Workgroup: t.Workgroup, LDS: LDSBlock(t.GroupSegmentSize), Scratch: t.PrivateSegmentSize}}
		return fn(&ev)
	})
	if err != nil {
		return err
	}
	err = db.RegionTimings(func(in *rocpdread.Info, t *rocpdread.Timing) error {
		ev = Event{Domain: CategoryDomain(t.Category), Name: t.Name, Start: t.Start, End: t.End, Process: proc(in, t.PID), Bytes: -1}
		return fn(&ev)
	})
	if err != nil {
		return err
	}
	err = db.Copies(func(in *rocpdread.Info, c *rocpdread.Copy) error {
		ev = Event{Domain: Copy, Name: c.Direction, Start: c.Start, End: c.End, Process: proc(in, c.PID), Bytes: c.Size}
		return fn(&ev)
	})
	if err != nil {
		return err
	}
	return db.Allocations(func(in *rocpdread.Info, a *rocpdread.Allocation) error {
		ev = Event{Domain: Allocation, Name: AllocOperation(a.Type, a.Level), Start: a.Start, End: a.End, Process: proc(in, a.PID), Bytes: -1}
		if a.Level == "SCRATCH" {
			ev.Domain = Scratch
		}
		return fn(&ev)
	})
}

// AllocOperation returns rocprofv3's operation name for a rocpd_memory_allocate
// (type, level) pair, e.g. (ALLOC, VIRTUAL) → MEMORY_ALLOCATION_VMEM_ALLOCATE.
func AllocOperation(typ, level string) string {
	switch level {
	case "SCRATCH":
		switch typ {
		case "ALLOC":
			return "SCRATCH_MEMORY_ALLOC"
		case "FREE":
			return "SCRATCH_MEMORY_FREE"
		case "RECLAIM":
			return "SCRATCH_MEMORY_ASYNC_RECLAIM"
		}
		return "SCRATCH_MEMORY_" + typ
	case "VIRTUAL":
		if typ == "ALLOC" {
			return "MEMORY_ALLOCATION_VMEM_ALLOCATE"
		}
		return "MEMORY_ALLOCATION_VMEM_" + typ
	}
	if typ == "ALLOC" {
		return "MEMORY_ALLOCATION_ALLOCATE"
	}
	return "MEMORY_ALLOCATION_" + typ
}

// validNames repairs each event's name before fn sees it.
func validNames(fn func(*Event) error) func(*Event) error {
	return func(e *Event) error {
		e.Name = model.ValidString(e.Name)
		return fn(e)
	}
}
