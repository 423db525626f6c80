package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Parquet layout: one file per domain. Columns are typed (unsigned
// integers for ids, sizes and ns timestamps), string columns are
// dictionary-encoded by the Parquet writer, every column is zstd
// compressed. Record batches of pqBatchRows bound the memory held.
const (
	pqBatchRows    = 32 * 1024
	pqRowGroupRows = 128 * 1024
)

// pqFileNames names each domain's file; kernels.parquet is the kernel
// dispatch table analysis notebooks look for.
var pqFileNames = [numDomains]string{
	domHSA: "hsa_api", domHIP: "hip_api", domMarker: "marker_api", domKernel: "kernels",
	domCopy: "memory_copy", domScratch: "scratch_memory", domCounter: "counter_collection",
	domAlloc: "memory_allocation",
}

func pqU64(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint64}
}
func pqU32(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint32}
}
func pqI32(name string) arrow.Field { return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32} }
func pqStr(name string) arrow.Field { return arrow.Field{Name: name, Type: arrow.BinaryTypes.String} }
func pqF64(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64}
}

var pqTimes = []arrow.Field{pqU64("correlation_id"), pqU64("start_ns"), pqU64("end_ns"), pqU64("duration_ns")}

func withTimes(f ...arrow.Field) []arrow.Field { return append(f, pqTimes...) }

// pqSchemas are the columns of each domain's file.
var pqSchemas = [numDomains]*arrow.Schema{
	domHIP:    arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqStr("domain"), pqStr("function")), nil),
	domHSA:    arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqStr("domain"), pqStr("function")), nil),
	domMarker: arrow.NewSchema(withTimes(pqI32("pid"), pqU32("tid"), pqStr("domain"), pqStr("function"), pqStr("message")), nil),
	domKernel: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqU32("agent_id"), pqStr("agent_type"),
		pqU64("queue_id"), pqU64("stream_id"), pqU64("dispatch_id"), pqU64("kernel_id"), pqStr("kernel_name")),
		pqU32("grid_x"), pqU32("grid_y"), pqU32("grid_z"), pqU32("block_x"), pqU32("block_y"), pqU32("block_z"),
		pqU32("regs"), pqU32("accum_regs"), pqU32("sgprs"), pqU32("shared_mem"), pqU32("scratch")), nil),
	domCopy: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqStr("direction"), pqU32("src_agent_id"),
		pqU32("dst_agent_id"), pqU64("stream_id")), pqU64("bytes"), pqU64("src_address"), pqU64("dst_address")), nil),
	domAlloc: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqStr("operation"), pqU32("agent_id")),
		pqU64("address"), pqU64("size")), nil),
	domScratch: arrow.NewSchema(append(withTimes(pqI32("pid"), pqU32("tid"), pqStr("operation"), pqU32("agent_id"),
		pqU64("queue_id")), pqU32("flags"), pqU64("size")), nil),
	domCounter: arrow.NewSchema([]arrow.Field{pqI32("pid"), pqU32("agent_id"), pqU64("dispatch_id"),
		pqU64("counter_id"), pqStr("counter_name"), pqU32("instance"), pqF64("value")}, nil),
}

// pqTable is one open Parquet file.
type pqTable struct {
	path string
	f    *os.File
	fw   *pqarrow.FileWriter
	rb   *array.RecordBuilder
	rows int
	b    []array.Builder
	// Encoding and compressing a batch runs in the table's own goroutine
	// while the next batch is filled: the spool decoding and the Parquet
	// encoding then share the two cores.
	batches chan arrow.RecordBatch
	done    chan error
}

func newPQTable(path string, schema *arrow.Schema) (*pqTable, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	mem := memory.DefaultAllocator
	// Dictionaries pay off for names; on timestamps and ids, which are
	// nearly unique, they only cost hashing before the fallback to plain.
	opts := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(pqRowGroupRows), parquet.WithAllocator(mem),
		parquet.WithCreatedBy("rocprof-go")}
	for _, f := range schema.Fields() {
		if f.Type.ID() == arrow.STRING {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
		}
	}
	props := parquet.NewWriterProperties(opts...)
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return nil, err
	}
	rb := array.NewRecordBuilder(mem, schema)
	rb.Reserve(pqBatchRows)
	t := &pqTable{path: path, f: f, fw: fw, rb: rb, b: rb.Fields(),
		batches: make(chan arrow.RecordBatch, 1), done: make(chan error, 1)}
	go t.encode()
	return t, nil
}

func (t *pqTable) encode() {
	var err error
	for rec := range t.batches {
		if err == nil {
			err = t.fw.Write(rec)
		}
		rec.Release()
	}
	t.done <- err
}

func (t *pqTable) u64(i int, v uint64) { t.b[i].(*array.Uint64Builder).UnsafeAppend(v) }
func (t *pqTable) u32(i int, v uint32) { t.b[i].(*array.Uint32Builder).UnsafeAppend(v) }
func (t *pqTable) i32(i int, v int32)  { t.b[i].(*array.Int32Builder).UnsafeAppend(v) }
func (t *pqTable) f64(i int, v float64) {
	t.b[i].(*array.Float64Builder).UnsafeAppend(v)
}
func (t *pqTable) str(i int, v string) { t.b[i].(*array.StringBuilder).Append(v) }

// times appends correlation id, start, end and duration from column i.
func (t *pqTable) times(i int, corr, start, end uint64) {
	t.u64(i, corr)
	t.u64(i+1, start)
	t.u64(i+2, end)
	t.u64(i+3, dur(start, end))
}

// row ends a row, writing a batch when it is full.
func (t *pqTable) row() error {
	t.rows++
	if t.rows == pqBatchRows {
		return t.writeBatch()
	}
	return nil
}

func (t *pqTable) writeBatch() error {
	if t.rows == 0 {
		return nil
	}
	rec := t.rb.NewRecordBatch()
	t.rows = 0
	t.rb.Reserve(pqBatchRows)
	select {
	case t.batches <- rec:
		return nil
	case err := <-t.done: // the encoder stopped on an error
		rec.Release()
		t.done <- err
		return err
	}
}

func (t *pqTable) close() error {
	err := t.writeBatch()
	close(t.batches)
	if eerr := <-t.done; err == nil {
		err = eerr
	}
	if cerr := t.fw.Close(); err == nil {
		err = cerr
	}
	t.rb.Release()
	return err
}

// parquetPath places a domain's file: <prefix>_<name>.parquet, or with the
// hive layout <dir>/domain=<name>/rank=<n>/<base>.parquet.
func parquetPath(prefix string, d domain, o *Options) string {
	name := pqFileNames[d]
	if o.ParquetHive {
		return filepath.Join(filepath.Dir(prefix), "domain="+name, "rank="+strconv.Itoa(o.ParquetRank),
			filepath.Base(prefix)+".parquet")
	}
	return prefix + "_" + name + ".parquet"
}

// WriteParquet writes one Parquet file per domain with records, named from
// the output prefix (see parquetPath). Domains without records get no file.
func WriteParquet(prefix string, in *Input) error {
	var tables [numDomains]*pqTable
	var counts [numDomains]uint64
	// A first look at the counts decides which files exist.
	err := in.openEach(func(p *process, r *tracing.Reader) error {
		for d := range counts {
			counts[d] += p.Counts[d]
		}
		return nil
	})
	if err != nil {
		return err
	}
	for d := domain(0); d < numDomains; d++ {
		if counts[d] == 0 {
			continue
		}
		t, err := newPQTable(parquetPath(prefix, d, &in.Options), pqSchemas[d])
		if err != nil {
			for _, t := range tables {
				if t != nil {
					t.close()
				}
			}
			return fmt.Errorf("parquet %s: %w", pqFileNames[d], err)
		}
		tables[d] = t
	}
	err = in.openEach(func(p *process, r *tracing.Reader) error { return writeParquetProcess(&tables, p, r) })
	for _, t := range tables {
		if t != nil {
			if cerr := t.close(); err == nil {
				err = cerr
			}
		}
	}
	return err
}

func writeParquetProcess(tables *[numDomains]*pqTable, p *process, r *tracing.Reader) error {
	pid := p.Info.PID
	for r.Next() {
		var t *pqTable
		switch r.Kind() {
		case tracing.KindHIPAPI, tracing.KindHSAAPI:
			a := r.APICall()
			t = tables[domHSA]
			if r.Kind() == tracing.KindHIPAPI {
				t = tables[domHIP]
			}
			t.i32(0, pid)
			t.u32(1, a.TID)
			t.str(2, a.Domain.String())
			t.str(3, p.funcName(a.Domain, a.Function))
			t.times(4, a.CorrelationID, a.Start, a.End)
		case tracing.KindMarker:
			m := r.Marker()
			t = tables[domMarker]
			t.i32(0, pid)
			t.u32(1, m.TID)
			t.str(2, m.Domain.String())
			t.str(3, m.Function.String())
			t.str(4, markerName(&m))
			t.times(5, m.CorrelationID, m.Start, m.End)
		case tracing.KindKernelDispatch:
			d := r.KernelDispatch()
			t = tables[domKernel]
			t.i32(0, pid)
			t.u32(1, d.TID)
			t.u32(2, d.AgentNode)
			t.str(3, p.agentType(d.AgentNode))
			t.u64(4, d.QueueID)
			t.u64(5, d.StreamID)
			t.u64(6, d.DispatchID)
			t.u64(7, d.KernelID)
			t.str(8, p.dispatchName(&d))
			t.times(9, d.CorrelationID, d.Start, d.End)
			for i := 0; i < 3; i++ {
				t.u32(13+i, d.Grid[i])
				t.u32(16+i, d.Workgroup[i])
			}
			t.u32(19, d.VGPRCount)
			t.u32(20, d.AGPRCount)
			t.u32(21, d.SGPRCount)
			t.u32(22, (d.GroupSegmentSize+511)/512*512)
			t.u32(23, d.PrivateSegmentSize)
		case tracing.KindMemoryCopy:
			c := r.MemoryCopy()
			t = tables[domCopy]
			t.i32(0, pid)
			t.u32(1, c.TID)
			t.str(2, c.Direction.String())
			t.u32(3, c.SrcAgentNode)
			t.u32(4, c.DstAgentNode)
			t.u64(5, c.StreamID)
			t.times(6, c.CorrelationID, c.Start, c.End)
			t.u64(10, c.Bytes)
			t.u64(11, c.SrcAddress)
			t.u64(12, c.DstAddress)
		case tracing.KindMemoryAllocation:
			a := r.MemoryAllocation()
			t = tables[domAlloc]
			t.i32(0, pid)
			t.u32(1, a.TID)
			t.str(2, a.Operation.String())
			t.u32(3, a.AgentNode)
			t.times(4, a.CorrelationID, a.Start, a.End)
			t.u64(8, a.Address)
			t.u64(9, a.Size)
		case tracing.KindScratchMemory:
			s := r.ScratchMemory()
			t = tables[domScratch]
			t.i32(0, pid)
			t.u32(1, s.TID)
			t.str(2, s.Operation.String())
			t.u32(3, s.AgentNode)
			t.u64(4, s.QueueID)
			t.times(5, s.CorrelationID, s.Start, s.End)
			t.u32(9, s.Flags)
			t.u64(10, s.Size)
		case tracing.KindCounterSample:
			c := r.CounterSample()
			t = tables[domCounter]
			t.i32(0, pid)
			t.u32(1, c.AgentNode)
			t.u64(2, c.DispatchID)
			t.u64(3, c.CounterID)
			t.str(4, p.counterName(&c))
			var inst uint32
			if len(c.Dims) > 0 {
				inst = c.Dims[0].Index
			}
			t.u32(5, inst)
			t.f64(6, c.Value)
		default:
			continue
		}
		if err := t.row(); err != nil {
			return err
		}
	}
	return nil
}
