package rocpdread

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/placeholder"
)

// Process is one rocpd_info_process row.
type Process struct {
	GUID     string
	PID      int64
	PPID     int64
	Hostname string
	Command  string
	Start    int64
	End      int64
	// Rank is the MPI/SLURM rank from the process environment, -1 if none.
	Rank int
	// Environment is the environment JSON object as stored.
	Environment string
	// ClockBoottimeNs and ClockRealtimeNs are the process's boottime and
	// realtime clocks read together at its start (rocprof-go's extdata
	// key "rocprof_go_clock"), 0 when the database has none.
	ClockBoottimeNs, ClockRealtimeNs uint64
}

// Agent is one rocpd_info_agent row.
type Agent struct {
	ID        int64
	Type      string // CPU or GPU
	Absolute  int64
	Logical   int64
	TypeIndex int64
	UUID      int64
	Name      string
	Model     string
	Vendor    string
	Product   string
}

// KernelSymbol is one rocpd_info_kernel_symbol row.
type KernelSymbol struct {
	ID               int64
	DisplayName      string
	KernelName       string // mangled
	GroupSegmentSize int64
	PrivateSegment   int64
	SGPRCount        int64
	ArchVGPRCount    int64
	AccumVGPRCount   int64
	CodeObjectID     int64
	KernelObject     int64
	KernargSize      int64
	// EntryOffset is extdata's kernel_code_entry_byte_offset (the
	// descriptor's entry offset), 0 when absent.
	EntryOffset int64
}

// Name returns the name summaries group by: the display name, else the
// mangled name, else "kernel_<id>".
func (k *KernelSymbol) Name() string {
	switch {
	case k == nil:
		return ""
	case k.DisplayName != "":
		return k.DisplayName
	case k.KernelName != "":
		return k.KernelName
	}
	return "kernel_" + strconv.FormatInt(k.ID, 10)
}

// Info holds one image's small tables.
type Info struct {
	Image     Image
	Strings   map[int64]string
	Processes map[int64]*Process // by id (= pid)
	Agents    map[int64]*Agent
	Symbols   map[int64]*KernelSymbol
	Threads   map[int64]int64 // rocpd_info_thread id -> OS tid
}

// TID returns the OS thread id of a thread row id (rocprofv3 makes them
// equal; other writers may number rows).
func (in *Info) TID(id int64) int64 {
	if t, ok := in.Threads[id]; ok {
		return t
	}
	return id
}

// PID returns the OS process id of a process row id.
func (in *Info) PID(id int64) int64 {
	if p, ok := in.Processes[id]; ok {
		return p.PID
	}
	return id
}

// String returns a string by id ("" for unknown ids).
func (in *Info) String(id int64) string { return in.Strings[id] }

// Symbol returns the kernel symbol of an id, or a stand-in naming the id.
func (in *Info) Symbol(id int64) *KernelSymbol {
	if s, ok := in.Symbols[id]; ok {
		return s
	}
	s := &KernelSymbol{ID: id}
	in.Symbols[id] = s
	return s
}

// rankOf is a process's rank as the launcher that started it set it
// (placeholder.LauncherOf: the rank table of docs/mpi.md), read from its
// stored environment; -1 without one.
func rankOf(environment string) int {
	var env map[string]any
	if json.Unmarshal([]byte(environment), &env) != nil {
		return -1
	}
	l := placeholder.LauncherOf(func(name string) (string, bool) {
		v, ok := env[name]
		if !ok || v == nil {
			return "", false
		}
		if s, isString := v.(string); isString {
			return s, true
		}
		return fmt.Sprint(v), true
	})
	if l.Name == "" {
		return -1
	}
	r, err := strconv.Atoi(l.Rank)
	if err != nil {
		return -1
	}
	return r
}

// LoadInfo reads an image's strings, processes, agents and kernel symbols.
func (db *DB) LoadInfo(im Image) (*Info, error) {
	in := &Info{Image: im, Strings: map[int64]string{}, Processes: map[int64]*Process{},
		Agents: map[int64]*Agent{}, Symbols: map[int64]*KernelSymbol{},
		Threads: map[int64]int64{}}
	err := db.each(`SELECT id, string FROM `+quote(im.Table("rocpd_string")), func(r *sql.Rows) error {
		var id int64
		var s string
		if err := r.Scan(&id, &s); err != nil {
			return err
		}
		in.Strings[id] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = db.each(`SELECT p.id, p.pid, COALESCE(p.ppid, 0), COALESCE(n.hostname, ''), COALESCE(p.command, ''),
  COALESCE(p.start, p.init, 0), COALESCE(p."end", p.fini, 0), COALESCE(p.environment, '{}'),
  CASE WHEN json_valid(p.extdata) THEN COALESCE(CAST(json_extract(p.extdata, '$.rocprof_go_clock.boottime_ns') AS INTEGER), 0) ELSE 0 END,
  CASE WHEN json_valid(p.extdata) THEN COALESCE(CAST(json_extract(p.extdata, '$.rocprof_go_clock.realtime_ns') AS INTEGER), 0) ELSE 0 END
FROM `+quote(im.Table("rocpd_info_process"))+` p LEFT JOIN `+quote(im.Table("rocpd_info_node"))+` n ON n.id = p.nid`,
		func(r *sql.Rows) error {
			p := &Process{GUID: im.GUID, Rank: -1}
			var id int64
			var boot, real int64
			if err := r.Scan(&id, &p.PID, &p.PPID, &p.Hostname, &p.Command, &p.Start, &p.End, &p.Environment, &boot, &real); err != nil {
				return err
			}
			if boot > 0 && real > 0 {
				p.ClockBoottimeNs, p.ClockRealtimeNs = uint64(boot), uint64(real)
			}
			p.Rank = rankOf(p.Environment)
			in.Processes[id] = p
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = db.each(`SELECT id, COALESCE(type, ''), COALESCE(absolute_index, id), COALESCE(logical_index, id),
  COALESCE(type_index, 0), COALESCE(uuid, 0), COALESCE(name, ''), COALESCE(model_name, ''),
  COALESCE(vendor_name, ''), COALESCE(product_name, '') FROM `+quote(im.Table("rocpd_info_agent")), func(r *sql.Rows) error {
		a := &Agent{}
		if err := r.Scan(&a.ID, &a.Type, &a.Absolute, &a.Logical, &a.TypeIndex, &a.UUID, &a.Name, &a.Model,
			&a.Vendor, &a.Product); err != nil {
			return err
		}
		in.Agents[a.ID] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = db.each(`SELECT id, COALESCE(display_name, ''), COALESCE(kernel_name, ''), COALESCE(group_segment_size, 0),
  COALESCE(private_segment_size, 0), COALESCE(sgpr_count, 0), COALESCE(arch_vgpr_count, 0),
  COALESCE(accum_vgpr_count, 0), code_object_id, COALESCE(kernel_object, 0), COALESCE(kernarg_segment_size, 0),
  CASE WHEN json_valid(extdata) THEN COALESCE(CAST(json_extract(extdata, '$.kernel_code_entry_byte_offset') AS INTEGER), 0) ELSE 0 END
FROM `+quote(im.Table("rocpd_info_kernel_symbol")), func(r *sql.Rows) error {
		k := &KernelSymbol{}
		if err := r.Scan(&k.ID, &k.DisplayName, &k.KernelName, &k.GroupSegmentSize, &k.PrivateSegment,
			&k.SGPRCount, &k.ArchVGPRCount, &k.AccumVGPRCount, &k.CodeObjectID, &k.KernelObject, &k.KernargSize,
			&k.EntryOffset); err != nil {
			return err
		}
		in.Symbols[k.ID] = k
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = db.each(`SELECT id, tid FROM `+quote(im.Table("rocpd_info_thread")), func(r *sql.Rows) error {
		var id, tid int64
		if err := r.Scan(&id, &tid); err != nil {
			return err
		}
		in.Threads[id] = tid
		return nil
	})
	if err != nil {
		return nil, err
	}
	return in, nil
}

// each runs a query and calls fn for every row.
func (db *DB) each(q string, fn func(*sql.Rows) error, args ...any) error {
	rows, err := db.SQL.Query(q, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", db.Path, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("%s: %w", db.Path, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", db.Path, err)
	}
	return nil
}
