package analysis

import (
	"fmt"
	"os"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpd"
)

// Scan streams the events of one run: a ROCpd database file, or a directory
// holding rocprof-go or rocprofv3 CSV trace files.
func Scan(path string, fn func(*Event) error) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("read run: %w", err)
	}
	if st.IsDir() {
		return ScanCSVDir(path, fn)
	}
	if strings.HasSuffix(path, ".csv") {
		return ScanCSVFile(path, "", fn)
	}
	db, err := rocpd.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	return ScanDB(db, fn)
}

// ScanDB streams every timed record of a ROCpd database.
func ScanDB(db *rocpd.DB, fn func(*Event) error) error {
	procs := map[string]map[int64]*Process{}
	proc := func(in *rocpd.Info, pid int64) *Process {
		m := procs[in.Image.GUID]
		if m == nil {
			m = map[int64]*Process{}
			procs[in.Image.GUID] = m
		}
		if p, ok := m[pid]; ok {
			return p
		}
		p := &Process{Key: in.Image.GUID, PID: in.PID(pid), Rank: -1}
		if len(in.Processes) > 1 {
			p.Key += "/" + fmt.Sprint(pid)
		}
		if ip, ok := in.Processes[pid]; ok {
			p.Hostname, p.Rank = ip.Hostname, ip.Rank
		}
		m[pid] = p
		return p
	}
	var ev Event
	err := db.KernelTimings(func(in *rocpd.Info, t *rocpd.Timing) error {
		ev = Event{Domain: Kernel, Name: t.Name, Start: t.Start, End: t.End, Process: proc(in, t.PID)}
		return fn(&ev)
	})
	if err != nil {
		return err
	}
	err = db.RegionTimings(func(in *rocpd.Info, t *rocpd.Timing) error {
		ev = Event{Domain: CategoryDomain(t.Category), Name: t.Name, Start: t.Start, End: t.End, Process: proc(in, t.PID)}
		return fn(&ev)
	})
	if err != nil {
		return err
	}
	err = db.Copies(func(in *rocpd.Info, c *rocpd.Copy) error {
		ev = Event{Domain: Copy, Name: c.Direction, Start: c.Start, End: c.End, Process: proc(in, c.PID)}
		return fn(&ev)
	})
	if err != nil {
		return err
	}
	return db.Allocations(func(in *rocpd.Info, a *rocpd.Allocation) error {
		ev = Event{Domain: Allocation, Name: AllocOperation(a.Type, a.Level), Start: a.Start, End: a.End, Process: proc(in, a.PID)}
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
