package parquet

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Parquet layout: one file per domain. Columns are typed (unsigned
// integers for ids, sizes and ns timestamps), string columns are Arrow
// dictionary columns written as Parquet dictionary pages, every column is
// zstd compressed.
//
// How it stays fast and small (see parquet_batch.go): each table fills
// plain Go column slices from the decoded records, pqBatchRows rows at a
// time, and hands a full batch to its own encoder goroutine, which wraps
// the slices as Arrow arrays without copying and writes them as one row
// group. Two batches per table circulate, so memory is bounded whatever
// the trace length. Strings never reach a hash table per row: a batch's
// dictionary is built from the records' ids (function, kernel, agent,
// enum) as they come, and each row stores only its index.

// pqBatchRows is the rows of one batch, and so of one row group.
const pqBatchRows = 32 * 1024

// pqDictType is the type of every string column: int32 indices into a
// per-row-group dictionary of names.
var pqDictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

func pqU64(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint64}
}
func pqU32(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint32}
}
func pqI32(name string) arrow.Field { return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32} }
func pqStr(name string) arrow.Field { return arrow.Field{Name: name, Type: pqDictType} }
func pqF64(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64}
}

var pqTimes = []arrow.Field{pqU64("correlation_id"), pqU64("start_ns"), pqU64("end_ns"), pqU64("duration_ns")}

func withTimes(f ...arrow.Field) []arrow.Field { return append(f, pqTimes...) }

// pqSchemas are the columns of each domain's file.
var pqSchemas = [model.NumDomains]*arrow.Schema{
	model.DomHIP:    arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqStr("domain"), pqStr("function")), nil),
	model.DomHSA:    arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqStr("domain"), pqStr("function")), nil),
	model.DomRCCL:   arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqStr("domain"), pqStr("function")), nil),
	model.DomMarker: arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqStr("domain"), pqStr("function"), pqStr("message")), nil),
	model.DomKernel: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqU32("agent_id"), pqStr("agent_type"),
		pqU64("queue_id"), pqU64("stream_id"), pqU64("dispatch_id"), pqU64("kernel_id"), pqStr("kernel_name")),
		pqU32("grid_x"), pqU32("grid_y"), pqU32("grid_z"), pqU32("block_x"), pqU32("block_y"), pqU32("block_z"),
		pqU32("regs"), pqU32("accum_regs"), pqU32("sgprs"), pqU32("shared_mem"), pqU32("scratch")), nil),
	model.DomCopy: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqStr("direction"), pqU32("src_agent_id"),
		pqU32("dst_agent_id"), pqU64("stream_id")), pqU64("bytes"), pqU64("src_address"), pqU64("dst_address")), nil),
	model.DomAlloc: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqStr("operation"), pqU32("agent_id")),
		pqU64("address"), pqU64("size")), nil),
	model.DomScratch: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqStr("operation"), pqU32("agent_id"),
		pqU64("queue_id")), pqU32("flags"), pqU64("size")), nil),
	// One row per dispatch and counter, its dimension instances summed, as
	// counter_collection.csv has it (ROCpd keeps the instances).
	model.DomCounter: arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqU32("agent_id"), pqU64("queue_id"),
		pqU64("dispatch_id"), pqU64("kernel_id"), pqStr("kernel_name"), pqU64("grid_size"),
		pqU32("workgroup_size"), pqU64("counter_id"), pqStr("counter_name"), pqF64("value")), nil),
}

// pqWriterProps are the Parquet settings of every file: zstd at its
// fastest level; DELTA_BINARY_PACKED for the 64-bit columns; dictionaries
// for the string columns only (ids and
// timestamps are nearly unique: a dictionary would only cost hashing
// before the fallback to plain); no min/max statistics on the string
// columns, which no query prunes by.
func pqWriterProps(schema *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(int64(pqGroupRows)), parquet.WithDataPageSize(pqPageBytes), parquet.WithCreatedBy("rocprof-go")}
	for _, f := range schema.Fields() {
		if f.Type.ID() == arrow.UINT64 {
			// Timestamps and ids grow by small steps: delta encoding
			// shrinks them several times before zstd, which then has far
			// less to do (a third less CPU for the whole writer).
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
		}
		if f.Type.ID() == arrow.DICTIONARY {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true), parquet.WithStatsFor(f.Name, false))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

// pqTable is one open Parquet file: the batch being filled on the
// caller's goroutine and an encoder goroutine writing full ones into the
// open row group.
//
// A row group spans many batches (pqGroupRows rows): arrow-go keeps every
// row group's column-chunk metadata for the footer, about 13 KB per row
// group, so row groups of one batch each made the writer's memory grow by
// half a byte per record (issue 43: 600 MiB at a billion records). The row group is a buffered one: each
// batch's plain columns are encoded and compressed into their column
// chunks as it comes; a string column's indices are kept (4 bytes a row)
// and written once the row group ends, with the row group's dictionary,
// which grows over its batches (Arrow re-encodes a column chunk as plain
// text when its dictionary changes from one write to the next).
type pqTable struct {
	path   string
	schema *arrow.Schema
	f      *atomicfile.File // under a temporary name until close commits it
	fw     *file.Writer
	ctx    context.Context // Arrow's write context

	cur   *pqBatch      // being filled; nil until the first row after a flush
	made  int           // batches allocated (at most 2)
	free  chan *pqBatch // written batches, ready for reuse
	full  chan *pqBatch // batches for the encoder
	done  chan struct{} // the encoder has finished
	dicts []pqDictIndex // per column: the current row group's dictionary lookups

	// The filler's side of the open row group: its rows so far (batches
	// handed over) and, per string column, its dictionary and that
	// dictionary's bytes.
	groupRows      int
	groupDict      [][]string
	groupDictBytes int

	// The encoder's side: the open row group and the string columns'
	// indices of its batches.
	rg      file.BufferedRowGroupWriter
	indices [][]int32
	// big says the open row group's compressed pages passed
	// pqGroupPageBytes (set by the encoder, read by the filler: the row
	// group ends with the next batch).
	big atomic.Bool

	slots chan struct{} // shared by a Write call's tables: encoders at work

	mu  sync.Mutex
	err error // the encoder's first error
}

// pqGroupRows is the rows of a row group (the last one of a file and one
// cut early have fewer): 8 batches, 256Ki rows, for ~0.02 byte of footer
// metadata per record (a billion records: ~20 MiB).
var pqGroupRows = 8 * pqBatchRows

// SetGroupRows makes row groups of n rows (a multiple of the batch,
// 32,768), for tests that want several row groups from small spools; it
// returns the function that restores the default.
func SetGroupRows(n int) (restore func()) {
	old := pqGroupRows
	pqGroupRows = max(n/pqBatchRows, 1) * pqBatchRows
	return func() { pqGroupRows = old }
}

// pqPageBytes is the data pages' size before compression: each column
// of an open row group holds one page being encoded and its compressed
// copy, so with every column of a buffered row group open at once Arrow's
// default (1 MiB) made them tens of MiB (268 MiB RssAnon at 8M scale
// records; 256 KiB: 145 MiB, and still 36 MiB more at 2M records than at
// 500k, as the buffers filled).
const pqPageBytes = 64 << 10

// pqGroupPageBytes ends a row group early when its compressed pages, held
// in memory until it ends, pass it.
const pqGroupPageBytes = 32 << 20

// pqGroupDictBytes ends a row group early when its dictionaries' text
// passes it (free text such as markers' messages is held until the row
// group ends).
const pqGroupDictBytes = 16 << 20

func newPQTable(path string, schema *arrow.Schema, slots chan struct{}) (*pqTable, error) {
	if err := atomicfile.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := atomicfile.Create(path, atomicfile.Public)
	if err != nil {
		return nil, err
	}
	fw, err := newPQFileWriter(f, schema)
	if err != nil {
		f.Abort()
		return nil, err
	}
	arrowProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	t := &pqTable{path: path, schema: schema, f: f, fw: fw, ctx: pqarrow.NewArrowWriteContext(context.Background(), &arrowProps),
		free: make(chan *pqBatch, 2), full: make(chan *pqBatch, 2), done: make(chan struct{}),
		dicts: make([]pqDictIndex, schema.NumFields()), groupDict: make([][]string, schema.NumFields()),
		indices: make([][]int32, schema.NumFields()), slots: slots}
	go t.encode()
	return t, nil
}

// newPQFileWriter opens a Parquet file for schema as pqarrow's FileWriter
// does (the Parquet schema from the Arrow one, the Arrow schema stored in
// the footer's ARROW:schema), giving the row groups' column writers to
// the caller, which pqarrow's writer does not.
func newPQFileWriter(w io.Writer, schema *arrow.Schema) (*file.Writer, error) {
	props := pqWriterProps(schema)
	pqschema, err := pqarrow.ToParquet(schema, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	meta := metadata.KeyValueMetadata{}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(schema, props.Allocator())))
	return file.NewParquetWriterWithError(w, pqschema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
}

func (t *pqTable) encode() {
	defer close(t.done)
	for b := range t.full {
		if t.failed() == nil {
			t.slots <- struct{}{}
			err := t.write(b)
			<-t.slots
			if err != nil {
				t.mu.Lock()
				t.err = err
				t.mu.Unlock()
			}
		}
		t.free <- b
	}
}

func (t *pqTable) failed() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// batch returns the batch to fill, taking a written one back (or making
// the second one) when the last was flushed.
func (t *pqTable) batch() *pqBatch {
	if t.cur != nil {
		return t.cur
	}
	select {
	case b := <-t.free:
		t.cur = b
	default:
		if t.made < 2 {
			t.made++
			t.cur = newPQBatch(t.schema, pqBatchRows)
		} else {
			t.cur = <-t.free
		}
	}
	t.cur.reset()
	return t.cur
}

// flush hands the current batch to the encoder, ending the row group when
// it is full (or its dictionaries large).
func (t *pqTable) flush() error {
	return t.hand(false)
}

// hand hands the current batch to the encoder; last (or a full row group)
// ends the row group with it, and the batch then carries the row group's
// dictionaries.
func (t *pqTable) hand(last bool) error {
	if err := t.failed(); err != nil {
		return err
	}
	if t.cur == nil || t.cur.n == 0 {
		if !last || t.groupRows == 0 {
			return nil
		}
		t.batch() // an empty batch that ends the row group
	}
	b := t.cur
	t.groupRows += b.n
	if last || t.groupRows+pqBatchRows > pqGroupRows || t.groupDictBytes >= pqGroupDictBytes || t.big.Load() {
		b.last = true
		t.big.Store(false)
		b.dict = t.groupDict
		t.groupDict = make([][]string, len(t.groupDict))
		t.groupRows, t.groupDictBytes = 0, 0
		for i := range t.dicts {
			t.dicts[i].clear()
		}
	}
	t.full <- b
	t.cur = nil
	return nil
}

// newProcess forgets the id-keyed dictionary lookups: ids are per process.
func (t *pqTable) newProcess() {
	for i := range t.dicts {
		clear(t.dicts[i].ids)
	}
}

// close writes the rest and the footer into the temporary file; the
// caller then commits or aborts every table of the call.
func (t *pqTable) close() error {
	err := t.hand(true)
	close(t.full)
	<-t.done
	if eerr := t.failed(); err == nil {
		err = eerr
	}
	if cerr := t.fw.Close(); err == nil {
		err = cerr
	}
	return err
}

// parquetPath places a domain's file: <prefix>_<name>.parquet, or with the
// hive layout <dir>/domain=<name>/rank=<n>/host=<host>/<base>.parquet
// (rank=<n>/<base>.parquet when the host is not known).
func parquetPath(prefix string, d model.Domain, o *model.Config) string {
	return parquetNamePath(prefix, model.Domains[d].Parquet, o)
}

// parquetNamePath is parquetPath for a table's name.
func parquetNamePath(prefix, name string, o *model.Config) string {
	if o.ParquetHive {
		root, base := filepath.Dir(prefix), filepath.Base(prefix)
		if o.ParquetHiveRoot != "" {
			if rel, err := filepath.Rel(o.ParquetHiveRoot, prefix); err == nil && !strings.HasPrefix(rel, "..") {
				root, base = o.ParquetHiveRoot, strings.ReplaceAll(rel, string(filepath.Separator), "-")
			}
		}
		dir := filepath.Join(root, "domain="+name, "rank="+strconv.Itoa(o.ParquetRank))
		if o.ParquetHost != "" {
			dir = filepath.Join(dir, "host="+hivePartValue(o.ParquetHost))
		}
		return filepath.Join(dir, base+".parquet")
	}
	return prefix + "_" + name + ".parquet"
}

// Write writes one Parquet file per domain with records, named from
// the output prefix (see parquetPath). Domains without records get no file:
// a domain's file is created at its first record.
func Write(prefix string, in *model.Input) error {
	// As many row groups are encoded at once as there are cores: more
	// would only hold more encoder memory.
	w := &pqWriter{prefix: prefix, opts: &in.Config, slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
	err := in.OpenEach(w.process)
	for _, t := range w.all() {
		if t != nil {
			if cerr := t.close(); err == nil {
				err = cerr
			}
		}
	}
	// The domains' files get their names together, and only when every
	// one was written whole: a failed Parquet output leaves none of them.
	for _, t := range w.all() {
		if t == nil {
			continue
		}
		if err != nil {
			t.f.Abort()
		} else {
			err = t.f.Commit()
		}
	}
	return err
}

// pqWriter is one Write call: the domains' tables, opened lazily.
type pqWriter struct {
	prefix string
	opts   *model.Config
	slots  chan struct{}
	tables [model.NumDomains]*pqTable
	pc     [2]*pqTable // PC samples: host trap, stochastic (pcsample.go)
}

// all is every table, domains then PC samples.
func (w *pqWriter) all() []*pqTable { return append(w.tables[:], w.pc[:]...) }

// table returns the domain's table, creating its file on first use.
func (w *pqWriter) table(d model.Domain) (*pqTable, error) {
	if t := w.tables[d]; t != nil {
		return t, nil
	}
	t, err := newPQTable(parquetPath(w.prefix, d, w.opts), pqSchemas[d], w.slots)
	if err != nil {
		return nil, fmt.Errorf("parquet %s: %w", model.Domains[d].Parquet, err)
	}
	w.tables[d] = t
	return t, nil
}

// pqCounterSum is one counter of one dispatch, its instances summed.
type pqCounterSum struct {
	raw   uint64 // the recorded id: the order, as counter_collection.csv's
	id    uint64 // the id written (model's CounterID: a selection's own)
	name  string
	agent uint32
	value float64
}

// counterSums reads a process's counter samples and rewinds: per
// dispatch, each counter's instances summed, in counter id order. Counter
// runs serialise their dispatches, so the sampled dispatches are few.
func counterSums(p *model.Catalogue, r *model.SpoolView) map[uint64][]pqCounterSum {
	sums := map[uint64][]pqCounterSum{}
	for r.Next() {
		if r.Kind() != tracing.KindCounterSample {
			continue
		}
		c := r.CounterSample()
		list := sums[c.DispatchID]
		id := p.CounterID(&c)
		i := sort.Search(len(list), func(i int) bool {
			return list[i].raw > c.CounterID || list[i].raw == c.CounterID && list[i].id >= id
		})
		if i == len(list) || list[i].id != id {
			list = slices.Insert(list, i, pqCounterSum{raw: c.CounterID, id: id, name: p.CounterName(&c), agent: c.AgentNode})
			sums[c.DispatchID] = list
		}
		list[i].value += c.Value
	}
	r.Rewind()
	return sums
}

// counterRows writes a dispatch's counter rows; d is nil for samples whose
// dispatch record is missing (a process killed in between): their rows keep
// the agent, dispatch and counter, with zero for the rest.
func (w *pqWriter) counterRows(p *model.Catalogue, dispatchID uint64, d *tracing.KernelDispatch, sums []pqCounterSum) error {
	t, err := w.table(model.DomCounter)
	if err != nil {
		return err
	}
	for _, c := range sums {
		b := t.batch()
		n := b.n
		b.i32(0, n, p.Info.PID)
		b.u32(2, n, c.agent)
		b.u64(4, n, dispatchID)
		if d != nil {
			b.u32(1, n, d.TID)
			b.u64(3, n, d.QueueID)
			b.u64(5, n, d.KernelID)
			t.dictString(6, n, p.DispatchName(d))
			b.u64(7, n, uint64(d.Grid[0])*uint64(d.Grid[1])*uint64(d.Grid[2]))
			b.u32(8, n, d.Workgroup[0]*d.Workgroup[1]*d.Workgroup[2])
			b.times(12, n, p.CID(d.CorrelationID), d.Start, d.End)
		} else {
			b.u32(1, n, 0)
			b.u64(3, n, 0)
			b.u64(5, n, 0)
			t.dictString(6, n, "")
			b.u64(7, n, 0)
			b.u32(8, n, 0)
			b.times(12, n, 0, 0, 0)
		}
		b.u64(9, n, c.id)
		if !t.dictID(10, n, c.id) {
			t.dictAdd(10, n, c.id, c.name)
		}
		b.f64(11, n, c.value)
		b.n++
		if b.n == pqBatchRows {
			if err := t.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *pqWriter) process(p *model.Catalogue, r *model.SpoolView) error {
	for _, t := range w.all() {
		if t != nil {
			t.newProcess()
		}
	}
	var sums map[uint64][]pqCounterSum
	if p.Counts[model.DomCounter] > 0 {
		sums = counterSums(p, r)
	}
	pid := p.Info.PID
	var sampled *tracing.KernelDispatch // a dispatch with counters: its rows follow its own
	for r.Next() {
		d := model.KindDomain(r.Kind())
		if d < 0 || d == model.DomCounter {
			continue // counter rows are written with their dispatch's
		}
		t, err := w.table(d)
		if err != nil {
			return err
		}
		b := t.batch()
		n := b.n
		switch r.Kind() {
		case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
			a := r.APICall()
			b.i32(0, n, pid)
			b.u32(1, n, a.TID)
			if !t.dictID(2, n, uint64(a.Domain)) {
				t.dictAdd(2, n, uint64(a.Domain), a.Domain.String())
			}
			if key := uint64(a.Domain)<<32 | uint64(a.Function); !t.dictID(3, n, key) {
				t.dictAdd(3, n, key, p.FuncName(a.Domain, a.Function))
			}
			b.times(4, n, p.CID(a.CorrelationID), a.Start, a.End)
		case tracing.KindMarker:
			m := r.Marker()
			b.i32(0, n, pid)
			b.u32(1, n, m.TID)
			if !t.dictID(2, n, uint64(m.Domain)) {
				t.dictAdd(2, n, uint64(m.Domain), m.Domain.String())
			}
			if !t.dictID(3, n, uint64(m.Function)) {
				t.dictAdd(3, n, uint64(m.Function), m.Function.String())
			}
			if m.Function.CarriesMessage() {
				t.dictBytes(4, n, m.Message)
			} else {
				t.dictString(4, n, m.Function.String())
			}
			b.times(5, n, p.CID(m.CorrelationID), m.Start, m.End)
		case tracing.KindKernelDispatch:
			k := r.KernelDispatch()
			b.i32(0, n, pid)
			b.u32(1, n, k.TID)
			b.u32(2, n, k.AgentNode)
			if !t.dictID(3, n, uint64(k.AgentNode)) {
				t.dictAdd(3, n, uint64(k.AgentNode), p.AgentType(k.AgentNode))
			}
			b.u64(4, n, k.QueueID)
			b.u64(5, n, k.StreamID)
			b.u64(6, n, k.DispatchID)
			b.u64(7, n, k.KernelID)
			if p.Renamer != nil {
				t.dictString(8, n, p.DispatchName(&k))
			} else if !t.dictID(8, n, k.KernelID) {
				t.dictAdd(8, n, k.KernelID, p.KernelName(k.KernelID))
			}
			b.times(9, n, p.CID(k.CorrelationID), k.Start, k.End)
			for i := 0; i < 3; i++ {
				b.u32(13+i, n, k.Grid[i])
				b.u32(16+i, n, k.Workgroup[i])
			}
			b.u32(19, n, k.VGPRCount)
			b.u32(20, n, k.AGPRCount)
			b.u32(21, n, k.SGPRCount)
			b.u32(22, n, (k.GroupSegmentSize+511)/512*512)
			b.u32(23, n, k.PrivateSegmentSize)
			if _, ok := sums[k.DispatchID]; ok {
				sampled = &k
			}
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			b.i32(0, n, pid)
			b.u32(1, n, c.TID)
			if !t.dictID(2, n, uint64(c.Direction)) {
				t.dictAdd(2, n, uint64(c.Direction), c.Direction.String())
			}
			b.u32(3, n, c.SrcAgentNode)
			b.u32(4, n, c.DstAgentNode)
			b.u64(5, n, c.StreamID)
			b.times(6, n, p.CID(c.CorrelationID), c.Start, c.End)
			b.u64(10, n, c.Bytes)
			b.u64(11, n, c.SrcAddress)
			b.u64(12, n, c.DstAddress)
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			b.i32(0, n, pid)
			b.u32(1, n, a.TID)
			if !t.dictID(2, n, uint64(a.Operation)) {
				t.dictAdd(2, n, uint64(a.Operation), a.Operation.String())
			}
			b.u32(3, n, a.AgentNode)
			b.times(4, n, p.CID(a.CorrelationID), a.Start, a.End)
			b.u64(8, n, a.Address)
			b.u64(9, n, a.Size)
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			b.i32(0, n, pid)
			b.u32(1, n, s.TID)
			if !t.dictID(2, n, uint64(s.Operation)) {
				t.dictAdd(2, n, uint64(s.Operation), s.Operation.String())
			}
			b.u32(3, n, s.AgentNode)
			b.u64(4, n, s.QueueID)
			b.times(5, n, p.CID(s.CorrelationID), s.Start, s.End)
			b.u32(9, n, s.Flags)
			b.u64(10, n, s.Size)
		}
		b.n++
		if b.n == pqBatchRows {
			if err := t.flush(); err != nil {
				return err
			}
		}
		if sampled != nil {
			if err := w.counterRows(p, sampled.DispatchID, sampled, sums[sampled.DispatchID]); err != nil {
				return err
			}
			delete(sums, sampled.DispatchID)
			sampled = nil
		}
	}
	// Samples whose dispatch record is missing are still written.
	for _, id := range slices.Sorted(maps.Keys(sums)) {
		if err := w.counterRows(p, id, nil, sums[id]); err != nil {
			return err
		}
	}
	return w.pcRows(p)
}

// File is one domain's file a Write call wrote.
type File struct {
	Path   string
	Domain string // rocprofv3's domain name, e.g. KERNEL_DISPATCH
	// Rows is the file's row count from its footer, for the files whose
	// rows are not one record of a domain each (the PC samples, which a
	// record carries by the thousand); 0 for the others.
	Rows uint64
}

// Files lists the files Write wrote for a prefix and options
// (one per domain that had records), so that run.json names each of them.
func Files(prefix string, o *model.Config) []File {
	var out []File
	for d := model.Domain(0); d < model.NumDomains; d++ {
		p := parquetPath(prefix, d, o)
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, File{Path: p, Domain: d.String()})
		}
	}
	for _, f := range pcFiles {
		p := parquetNamePath(prefix, f.name, o)
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, File{Path: p, Domain: f.domain, Rows: footerRows(p)})
		}
	}
	return out
}

// hivePartValue is a partition value as one path element readers split
// right: no '/', no '=', not "." or "..".
func hivePartValue(v string) string {
	v = strings.NewReplacer("/", "_", "=", "_", "\x00", "_").Replace(v)
	if v == "." || v == ".." {
		v = strings.Repeat("_", len(v))
	}
	return v
}

// footerRows is the row count a Parquet file's footer gives (0 when it
// cannot be read: run.json then says 0, as for a file with no rows).
func footerRows(path string) uint64 {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0
	}
	defer r.Close()
	return uint64(r.NumRows())
}
