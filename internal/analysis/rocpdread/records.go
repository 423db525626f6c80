package rocpdread

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// Dispatch is one rocpd_kernel_dispatch row. Scans reuse one value: copy
// what you keep.
type Dispatch struct {
	ID, PID, TID       int64
	AgentID, KernelID  int64
	DispatchID         int64
	QueueID, StreamID  int64
	Start, End         int64
	PrivateSegmentSize int64
	GroupSegmentSize   int64
	Workgroup, Grid    [3]int64
	RegionNameID       int64
	CorrelationID      int64 // internal (event stack_id)
	ExternalCorrID     int64
	EventID            int64
}

// Region is an API call or marker range (rocpd_region) or an instant
// (rocpd_sample, Start == End).
type Region struct {
	ID, PID, TID   int64
	Start, End     int64
	Category       string // buffer kind name, e.g. HIP_RUNTIME_API_EXT
	Name           string // operation name, e.g. hipMalloc, roctxRangePushA
	Message        string // marker text (event extdata "message")
	CorrelationID  int64
	ExternalCorrID int64
	Sample         bool
}

// Copy is one rocpd_memory_copy row.
type Copy struct {
	ID, PID, TID  int64
	Start, End    int64
	Direction     string
	SrcAgent      int64
	DstAgent      int64
	Size          int64
	StreamID      int64
	CorrelationID int64
	SrcAddress    int64
	DstAddress    int64
}

// Allocation is one rocpd_memory_allocate row (scratch included).
type Allocation struct {
	ID, PID, TID  int64
	Start, End    int64
	Type, Level   string
	AgentID       int64
	HasAgent      bool
	Address       int64
	Size          int64
	QueueID       int64
	Flags         int64 // scratch extdata "flags"
	CorrelationID int64
}

// scanImages calls fn with each image's Info; the caller's query runs per image.
func (db *DB) scanImages(fn func(*Info) error) error {
	for _, im := range db.Images {
		in, err := db.LoadInfo(im)
		if err != nil {
			return err
		}
		if err := fn(in); err != nil {
			return err
		}
	}
	return nil
}

// eventJoin joins a record table aliased r with its event row.
func eventJoin(im Image) string {
	return " LEFT JOIN " + quote(im.Table("rocpd_event")) + " e ON e.id = r.event_id"
}

// Dispatches streams every kernel dispatch, image by image, in id order.
func (db *DB) Dispatches(fn func(*Info, *Dispatch) error) error {
	var d Dispatch
	return db.scanImages(func(in *Info) error {
		q := `SELECT r.id, r.pid, COALESCE(r.tid, 0), r.agent_id, r.kernel_id, r.dispatch_id, r.queue_id, r.stream_id,
  r.start, r."end", COALESCE(r.private_segment_size, 0), COALESCE(r.group_segment_size, 0),
  r.workgroup_size_x, r.workgroup_size_y, r.workgroup_size_z, r.grid_size_x, r.grid_size_y, r.grid_size_z,
  COALESCE(r.region_name_id, 0), COALESCE(e.stack_id, r.dispatch_id), COALESCE(e.correlation_id, 0),
  COALESCE(r.event_id, 0)
FROM ` + quote(in.Image.Table("rocpd_kernel_dispatch")) + ` r` + eventJoin(in.Image) + ` ORDER BY r.id`
		return db.each(q, func(r *sql.Rows) error {
			if err := r.Scan(&d.ID, &d.PID, &d.TID, &d.AgentID, &d.KernelID, &d.DispatchID, &d.QueueID, &d.StreamID,
				&d.Start, &d.End, &d.PrivateSegmentSize, &d.GroupSegmentSize,
				&d.Workgroup[0], &d.Workgroup[1], &d.Workgroup[2], &d.Grid[0], &d.Grid[1], &d.Grid[2],
				&d.RegionNameID, &d.CorrelationID, &d.ExternalCorrID, &d.EventID); err != nil {
				return err
			}
			return fn(in, &d)
		})
	})
}

// messageExpr reads a marker's text from its event without parsing the
// empty extdata every API call carries.
const messageExpr = `CASE WHEN e.extdata IS NULL OR e.extdata = '{}' OR NOT json_valid(e.extdata) THEN ''
  ELSE COALESCE(json_extract(e.extdata, '$.message'), '') END`

// Regions streams API calls and marker ranges (rocpd_region) and instants
// (rocpd_sample; PC samples excepted: PCSamples), image by image. The two tables are merged by event id,
// which both writers hand out in record order, so markers come back in the
// order they were recorded, ranges and marks interleaved.
func (db *DB) Regions(fn func(*Info, *Region) error) error {
	return db.scanImages(func(in *Info) error {
		im := in.Image
		regions, err := db.SQL.Query(`SELECT r.id, r.pid, r.tid, r.start, r."end", r.name_id, COALESCE(e.category_id, 0), ` + messageExpr + `,
  COALESCE(e.stack_id, r.id), COALESCE(e.correlation_id, 0), COALESCE(r.event_id, 0)
FROM ` + quote(im.Table("rocpd_region")) + ` r` + eventJoin(im) + ` ORDER BY r.id`)
		if err != nil {
			return fmt.Errorf("%s: %w", db.Path, err)
		}
		defer regions.Close()
		samples, err := db.SQL.Query(`SELECT r.id, COALESCE(t.pid, 0), COALESCE(t.tid, 0), r.timestamp, r.timestamp, COALESCE(t.name_id, 0),
  COALESCE(e.category_id, 0), ` + messageExpr + `, COALESCE(e.stack_id, r.id), COALESCE(e.correlation_id, 0), COALESCE(r.event_id, 0)
FROM ` + quote(im.Table("rocpd_sample")) + ` r LEFT JOIN ` + quote(im.Table("rocpd_track")) + ` t ON t.id = r.track_id` +
			eventJoin(im) + ` WHERE COALESCE(e.category_id, 0) NOT IN (` + pcCategoryIDs(in) + `) ORDER BY r.id`)
		if err != nil {
			return fmt.Errorf("%s: %w", db.Path, err)
		}
		defer samples.Close()
		type cursor struct {
			rows  *sql.Rows
			g     Region
			event int64
			ok    bool
		}
		next := func(c *cursor) error {
			c.ok = c.rows.Next()
			if !c.ok {
				return c.rows.Err()
			}
			var name, cat int64
			g := &c.g
			if err := c.rows.Scan(&g.ID, &g.PID, &g.TID, &g.Start, &g.End, &name, &cat, &g.Message,
				&g.CorrelationID, &g.ExternalCorrID, &c.event); err != nil {
				return err
			}
			g.Category = in.String(cat)
			g.Name = in.String(name)
			if g.Sample && strings.HasPrefix(g.Category, "MARKER") {
				// A sample stores its track's name, not its operation;
				// rocprofv3 writes instants only for roctxMarkA.
				g.Name = "roctxMarkA"
			}
			return nil
		}
		r, sm := &cursor{rows: regions}, &cursor{rows: samples, g: Region{Sample: true}}
		if err := next(r); err != nil {
			return fmt.Errorf("%s: %w", db.Path, err)
		}
		if err := next(sm); err != nil {
			return fmt.Errorf("%s: %w", db.Path, err)
		}
		for r.ok || sm.ok {
			c := r
			if !r.ok || (sm.ok && sm.event < r.event) {
				c = sm
			}
			if err := fn(in, &c.g); err != nil {
				return err
			}
			if err := next(c); err != nil {
				return fmt.Errorf("%s: %w", db.Path, err)
			}
		}
		return nil
	})
}

// Copies streams memory copies image by image.
func (db *DB) Copies(fn func(*Info, *Copy) error) error {
	var c Copy
	return db.scanImages(func(in *Info) error {
		var name int64
		q := `SELECT r.id, r.pid, COALESCE(r.tid, 0), r.start, r."end", r.name_id, COALESCE(r.src_agent_id, 0),
  COALESCE(r.dst_agent_id, 0), r.size, COALESCE(r.stream_id, 0), COALESCE(e.stack_id, 0),
  COALESCE(r.src_address, 0), COALESCE(r.dst_address, 0)
FROM ` + quote(in.Image.Table("rocpd_memory_copy")) + ` r` + eventJoin(in.Image) + ` ORDER BY r.id`
		return db.each(q, func(r *sql.Rows) error {
			if err := r.Scan(&c.ID, &c.PID, &c.TID, &c.Start, &c.End, &name, &c.SrcAgent, &c.DstAgent,
				&c.Size, &c.StreamID, &c.CorrelationID, &c.SrcAddress, &c.DstAddress); err != nil {
				return err
			}
			c.Direction = in.String(name)
			return fn(in, &c)
		})
	})
}

// Allocations streams memory allocation and scratch rows image by image.
func (db *DB) Allocations(fn func(*Info, *Allocation) error) error {
	var a Allocation
	return db.scanImages(func(in *Info) error {
		var agent sql.NullInt64
		q := `SELECT r.id, r.pid, COALESCE(r.tid, 0), r.start, r."end", COALESCE(r.type, ''), COALESCE(r.level, ''),
  r.agent_id, COALESCE(r.address, 0), r.size, COALESCE(r.queue_id, 0),
  CASE WHEN json_valid(r.extdata) THEN COALESCE(CAST(json_extract(r.extdata, '$.flags') AS INTEGER), 0) ELSE 0 END,
  COALESCE(e.stack_id, 0)
FROM ` + quote(in.Image.Table("rocpd_memory_allocate")) + ` r` + eventJoin(in.Image) + ` ORDER BY r.id`
		return db.each(q, func(r *sql.Rows) error {
			if err := r.Scan(&a.ID, &a.PID, &a.TID, &a.Start, &a.End, &a.Type, &a.Level, &agent, &a.Address,
				&a.Size, &a.QueueID, &a.Flags, &a.CorrelationID); err != nil {
				return err
			}
			a.AgentID, a.HasAgent = agent.Int64, agent.Valid
			return fn(in, &a)
		})
	})
}

// CounterSums streams, per image, every dispatch that has counter values
// with each counter's value summed over its dimension instances (one row
// per instance is stored), counters in id order. Only dispatches with
// counters are held in memory: counter runs serialise dispatches, so they
// are few.
func (db *DB) CounterSums(fn func(in *Info, d *Dispatch, counter string, value float64) error) error {
	return db.scanImages(func(in *Info) error {
		im := in.Image
		names := map[int64]string{}
		err := db.each(`SELECT id, name FROM `+quote(im.Table("rocpd_info_pmc")), func(r *sql.Rows) error {
			var id int64
			var n string
			if err := r.Scan(&id, &n); err != nil {
				return err
			}
			names[id] = n
			return nil
		})
		if err != nil {
			return err
		}
		events := map[int64]*Dispatch{}
		err = db.each(`SELECT DISTINCT event_id FROM `+quote(im.Table("rocpd_pmc_event"))+` WHERE event_id IS NOT NULL`,
			func(r *sql.Rows) error {
				var id int64
				if err := r.Scan(&id); err != nil {
					return err
				}
				events[id] = nil
				return nil
			})
		if err != nil || len(events) == 0 {
			return err
		}
		one := &DB{Path: db.Path, SQL: db.SQL, Images: []Image{im}}
		err = one.Dispatches(func(_ *Info, d *Dispatch) error {
			if _, ok := events[d.EventID]; ok {
				c := *d
				events[d.EventID] = &c
			}
			return nil
		})
		if err != nil {
			return err
		}
		return db.each(`SELECT event_id, pmc_id, SUM(value) FROM `+quote(im.Table("rocpd_pmc_event"))+
			` WHERE event_id IS NOT NULL GROUP BY event_id, pmc_id ORDER BY event_id, pmc_id`, func(r *sql.Rows) error {
			var ev, pmc int64
			var v float64
			if err := r.Scan(&ev, &pmc, &v); err != nil {
				return err
			}
			d := events[ev]
			if d == nil {
				return nil // counter values of an event that is no dispatch
			}
			name, ok := names[pmc]
			if !ok {
				name = "counter_" + strconv.FormatInt(pmc, 10)
			}
			return fn(in, d, name, v)
		})
	})
}

// Timing is the narrow view of a record the analyses need: who, what, when.
// Scanning four or five columns instead of twenty keeps database/sql's
// per-value boxing off the hot path.
type Timing struct {
	PID        int64 // process row id; Info.PID maps it to the OS pid
	Start, End int64
	Name       string // kernel display name, API function, marker text, direction
	Category   string // event category (regions and samples only)
}

// KernelTiming is a dispatch's kernel name and times with its launch
// configuration (what makes two dispatches of one kernel comparable).
type KernelTiming struct {
	Timing
	Grid, Workgroup    [3]int64
	GroupSegmentSize   int64 // LDS bytes of the dispatch
	PrivateSegmentSize int64 // scratch bytes per work-item
}

// KernelTimings streams each dispatch's kernel name, times and launch
// configuration.
func (db *DB) KernelTimings(fn func(*Info, *KernelTiming) error) error {
	var t KernelTiming
	return db.scanImages(func(in *Info) error {
		var kernel int64
		return db.each(`SELECT pid, kernel_id, start, "end", grid_size_x, grid_size_y, grid_size_z,
  workgroup_size_x, workgroup_size_y, workgroup_size_z, COALESCE(group_segment_size, 0), COALESCE(private_segment_size, 0)
FROM `+quote(in.Image.Table("rocpd_kernel_dispatch")),
			func(r *sql.Rows) error {
				if err := r.Scan(&t.PID, &kernel, &t.Start, &t.End, &t.Grid[0], &t.Grid[1], &t.Grid[2],
					&t.Workgroup[0], &t.Workgroup[1], &t.Workgroup[2], &t.GroupSegmentSize, &t.PrivateSegmentSize); err != nil {
					return err
				}
				t.Name = in.Symbol(kernel).Name()
				return fn(in, &t)
			})
	})
}

// markerCategories returns the string ids of an image's marker categories,
// as an SQL list; only their events carry a message worth parsing.
func markerCategories(in *Info) string {
	ids := []string{"-1"}
	for id, s := range in.Strings {
		if strings.HasPrefix(s, "MARKER_") {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
	}
	return strings.Join(ids, ",")
}

// RegionTimings streams API calls and markers (regions, then samples, PC
// samples excepted); for
// markers Name is the message when there is one, else the operation.
func (db *DB) RegionTimings(fn func(*Info, *Timing) error) error {
	var t Timing
	return db.scanImages(func(in *Info) error {
		im := in.Image
		msg := `CASE WHEN e.category_id IN (` + markerCategories(in) + `) THEN ` + messageExpr + ` ELSE '' END`
		var name, cat int64
		var message sql.RawBytes
		row := func(r *sql.Rows) error {
			if err := r.Scan(&t.PID, &t.Start, &t.End, &name, &cat, &message); err != nil {
				return err
			}
			t.Category = in.String(cat)
			if len(message) > 0 {
				t.Name = string(message)
			} else {
				t.Name = in.String(name)
			}
			return fn(in, &t)
		}
		err := db.each(`SELECT r.pid, r.start, r."end", r.name_id, COALESCE(e.category_id, 0), `+msg+`
FROM `+quote(im.Table("rocpd_region"))+` r`+eventJoin(im), row)
		if err != nil {
			return err
		}
		return db.each(`SELECT COALESCE(t.pid, 0), r.timestamp, r.timestamp, COALESCE(t.name_id, 0),
  COALESCE(e.category_id, 0), `+msg+`
FROM `+quote(im.Table("rocpd_sample"))+` r LEFT JOIN `+quote(im.Table("rocpd_track"))+` t ON t.id = r.track_id`+eventJoin(im)+
			` WHERE COALESCE(e.category_id, 0) NOT IN (`+pcCategoryIDs(in)+`)`, row)
	})
}

// CodeObject is one rocpd_info_code_object row.
type CodeObject struct {
	ID, AgentID                   int64
	URI                           string
	LoadBase, LoadSize, LoadDelta int64
	StorageType                   string // FILE or MEMORY
}

// CodeObjects lists an image's code objects.
func (db *DB) CodeObjects(in *Info) ([]CodeObject, error) {
	var out []CodeObject
	err := db.each(`SELECT id, COALESCE(agent_id, 0), COALESCE(uri, ''), COALESCE(load_base, 0), COALESCE(load_size, 0),
  COALESCE(load_delta, 0), COALESCE(storage_type, '') FROM `+quote(in.Image.Table("rocpd_info_code_object"))+` ORDER BY id`,
		func(r *sql.Rows) error {
			var c CodeObject
			if err := r.Scan(&c.ID, &c.AgentID, &c.URI, &c.LoadBase, &c.LoadSize, &c.LoadDelta, &c.StorageType); err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
	return out, err
}
