package rocpd

import (
	"errors"
	"math"
	"sync/atomic"
)

// The bulk rows go through two goroutines: the one reading the spool
// decodes records and resolves ids and strings into batches of integers;
// an encoder turns the batches into records and pages (rocpd_btree.go) and
// writes them. On two cores the halves run side by side.

// rocpdColumn says where a bulk table's column value comes from.
type rocpdColumn uint8

const (
	colRowid      rocpdColumn = iota // the id column: stored as NULL, it is the rowid
	colGUID                          // the database's guid
	colInt                           // the row's next integer (sqlNull: NULL)
	colNull                          // a column the writer leaves NULL
	colEmptyJSON                     // '{}', the JSON columns' default
	colExt                           // the row's extdata text, '{}' when empty
	colAllocType                     // the next integer as ALLOC, FREE, REALLOC or RECLAIM
	colAllocLevel                    // the next integer as REAL, VIRTUAL or SCRATCH
	colReal                          // the next integer's bits as a float64 (NaN: NULL)
	colText                          // the row's next text (addText)
)

// The bulk tables, in the order of rocpdWriter.tables.
const (
	tabEvent = iota
	tabRegion
	tabSample
	tabDispatch
	tabCopy
	tabAlloc
	tabPMC
	tabArg
	numBulkTables
)

func repeatCol(c rocpdColumn, n int) []rocpdColumn {
	s := make([]rocpdColumn, n)
	for i := range s {
		s[i] = c
	}
	return s
}

func cols(parts ...[]rocpdColumn) []rocpdColumn {
	var s []rocpdColumn
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

func col(c ...rocpdColumn) []rocpdColumn { return c }

// rocpdBulk names each bulk table and lays out its columns in table order
// (sql/tables.sql).
var rocpdBulk = [numBulkTables]struct {
	name    string
	columns []rocpdColumn
}{
	// id, guid, category_id, stack_id, parent_stack_id, correlation_id,
	// call_stack, line_info, extdata
	tabEvent: {"event", cols(col(colRowid, colGUID), repeatCol(colInt, 4), col(colEmptyJSON, colEmptyJSON, colExt))},
	// id, guid, nid, pid, tid, start, end, name_id, event_id, extdata
	tabRegion: {"region", cols(col(colRowid, colGUID), repeatCol(colInt, 7), col(colEmptyJSON))},
	// id, guid, track_id, timestamp, event_id, extdata
	tabSample: {"sample", cols(col(colRowid, colGUID), repeatCol(colInt, 3), col(colEmptyJSON))},
	// id, guid, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id,
	// stream_id, start, end, private_segment_size, group_segment_size,
	// workgroup_size_x/y/z, grid_size_x/y/z, region_name_id, event_id, extdata
	tabDispatch: {"kernel_dispatch", cols(col(colRowid, colGUID), repeatCol(colInt, 20), col(colEmptyJSON))},
	// id, guid, nid, pid, tid, start, end, name_id, dst_agent_id,
	// dst_address, src_agent_id, src_address, size, queue_id, stream_id,
	// region_name_id, event_id, extdata
	tabCopy: {"memory_copy", cols(col(colRowid, colGUID), repeatCol(colInt, 11),
		col(colNull, colInt, colNull, colInt, colEmptyJSON))},
	// id, guid, nid, pid, tid, agent_id, type, level, start, end, address,
	// size, queue_id, stream_id, event_id, extdata
	tabAlloc: {"memory_allocate", cols(col(colRowid, colGUID), repeatCol(colInt, 4),
		col(colAllocType, colAllocLevel), repeatCol(colInt, 7), col(colExt))},
	// id, guid, event_id, pmc_id, value, extdata
	tabPMC: {"pmc_event", col(colRowid, colGUID, colInt, colInt, colReal, colEmptyJSON)},
	// id, guid, event_id, position, type, name, value, extdata
	tabArg: {"arg", cols(col(colRowid, colGUID), repeatCol(colInt, 2), repeatCol(colText, 3), col(colExt))},
}

// colRun is a column kind and, for colInt, how many columns in a row have
// it; rocpdRuns holds each bulk table's columns as runs.
type colRun struct {
	col rocpdColumn
	n   int
}

var rocpdRuns = func() (runs [numBulkTables][]colRun) {
	for i, t := range rocpdBulk {
		for _, c := range t.columns {
			if k := len(runs[i]) - 1; c == colInt && k >= 0 && runs[i][k].col == colInt {
				runs[i][k].n++
				continue
			}
			runs[i] = append(runs[i], colRun{c, 1})
		}
	}
	return runs
}()

var allocTypes = [...]string{1: "ALLOC", 2: "FREE", 3: "REALLOC", 4: "RECLAIM"}
var allocLevels = [...]string{1: "REAL", 2: "VIRTUAL", 3: "SCRATCH"}

// rowBatchRows is how many rows a batch carries.
const rowBatchRows = 4096

// rowBatch is rows handed to the encoder: each op's integers and texts,
// in order.
type rowBatch struct {
	vals  []int64
	texts []string
	ops   []rowOp
}

type rowOp struct {
	table uint8
	ext   string // extdata, "" for '{}'
}

// rowEncoder owns the bulk tables and the page file while the spool is
// read.
type rowEncoder struct {
	tables [numBulkTables]*btreeTable
	guid   string
	work   chan *rowBatch
	free   chan *rowBatch
	done   chan error
	cur    *rowBatch
	next   [numBulkTables]int64 // the producer's count of rows per table
	failed atomic.Bool          // the encoder met an error: the producer stops
}

// errEncoderStopped is returned to the producer after the encoder failed;
// stop gives the encoder's own error.
var errEncoderStopped = errors.New("rocpd: encoder stopped")

func (e *rowEncoder) start() {
	e.work = make(chan *rowBatch, 4)
	e.free = make(chan *rowBatch, 6)
	e.done = make(chan error, 1)
	for i := 0; i < 6; i++ {
		e.free <- &rowBatch{vals: make([]int64, 0, rowBatchRows*24), ops: make([]rowOp, 0, rowBatchRows)}
	}
	for i, t := range e.tables {
		e.next[i] = t.rows
	}
	e.cur = <-e.free
	go e.run()
}

func (e *rowEncoder) run() {
	var err error
	for b := range e.work {
		if err == nil {
			if err = e.encode(b); err != nil {
				e.failed.Store(true)
			}
		}
		b.vals, b.texts, b.ops = b.vals[:0], b.texts[:0], b.ops[:0]
		e.free <- b
	}
	e.done <- err
}

// add queues a row of a bulk table and returns its id.
func (e *rowEncoder) add(table int, ext string, vals ...int64) (int64, error) {
	b := e.cur
	b.vals = append(b.vals, vals...)
	b.ops = append(b.ops, rowOp{uint8(table), ext})
	e.next[table]++
	if len(b.ops) == rowBatchRows {
		e.work <- b
		e.cur = <-e.free
		// A failed encoder still hands batches back; stop reading early.
		if e.failed.Load() {
			return 0, errEncoderStopped
		}
	}
	return e.next[table], nil
}

// addText queues a row of a table with text columns (colText), which take
// texts in order.
func (e *rowEncoder) addText(table int, ext string, texts []string, vals ...int64) (int64, error) {
	e.cur.texts = append(e.cur.texts, texts...)
	return e.add(table, ext, vals...)
}

// stop hands over the last rows, waits for the encoder and returns its
// error.
func (e *rowEncoder) stop() error {
	if len(e.cur.ops) > 0 {
		e.work <- e.cur
	}
	close(e.work)
	return <-e.done
}

func (e *rowEncoder) encode(b *rowBatch) error {
	v, texts := b.vals, b.texts
	for _, op := range b.ops {
		t := e.tables[op.table]
		r := t.row()
		for _, run := range rocpdRuns[op.table] {
			switch run.col {
			case colInt:
				for _, x := range v[:run.n] {
					r.int(x)
				}
				v = v[run.n:]
			case colRowid, colNull:
				r.null()
			case colGUID:
				r.text(e.guid)
			case colEmptyJSON:
				r.text("{}")
			case colExt:
				if op.ext == "" {
					r.text("{}")
				} else {
					r.text(op.ext)
				}
			case colAllocType:
				r.text(allocTypes[v[0]])
				v = v[1:]
			case colAllocLevel:
				r.text(allocLevels[v[0]])
				v = v[1:]
			case colText:
				r.text(texts[0])
				texts = texts[1:]
			case colReal:
				if f := math.Float64frombits(uint64(v[0])); math.IsNaN(f) { // SQLite binds NaN as NULL
					r.null()
				} else {
					r.real(f)
				}
				v = v[1:]
			}
		}
		if err := t.end(t.rows + 1); err != nil {
			return err
		}
	}
	return nil
}
