package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// pqColumn is one column of a batch: exactly one slice is in use, chosen
// by the field's type (dictionary columns hold indices into the row
// group's dictionary in i32).
type pqColumn struct {
	u64 []uint64
	u32 []uint32
	i32 []int32
	f64 []float64
}

// pqBatch is up to pqBatchRows rows of a row group, column by column. Its
// slices are allocated once and reused for the life of the file. The last
// batch of a row group carries the row group's dictionaries, per column.
type pqBatch struct {
	n    int
	cols []pqColumn
	last bool
	dict [][]string
}

func newPQBatch(schema *arrow.Schema, rows int) *pqBatch {
	b := &pqBatch{cols: make([]pqColumn, schema.NumFields())}
	for i, f := range schema.Fields() {
		c := &b.cols[i]
		switch f.Type.ID() {
		case arrow.UINT64:
			c.u64 = make([]uint64, rows)
		case arrow.UINT32:
			c.u32 = make([]uint32, rows)
		case arrow.INT32, arrow.DICTIONARY:
			c.i32 = make([]int32, rows)
		case arrow.FLOAT64:
			c.f64 = make([]float64, rows)
		default:
			panic("parquet: no batch column for " + f.Type.String())
		}
	}
	return b
}

func (b *pqBatch) reset() {
	b.n, b.last, b.dict = 0, false, nil
}

func (b *pqBatch) u64(i, n int, v uint64)  { b.cols[i].u64[n] = v }
func (b *pqBatch) u32(i, n int, v uint32)  { b.cols[i].u32[n] = v }
func (b *pqBatch) i32(i, n int, v int32)   { b.cols[i].i32[n] = v }
func (b *pqBatch) f64(i, n int, v float64) { b.cols[i].f64[n] = v }

// times stores correlation id, start, end and duration from column i.
func (b *pqBatch) times(i, n int, corr, start, end uint64) {
	b.cols[i].u64[n] = corr
	b.cols[i+1].u64[n] = start
	b.cols[i+2].u64[n] = end
	b.cols[i+3].u64[n] = model.SpanClamped(start, end)
}

// write encodes a batch into the open row group (opening one first): its
// plain columns into their column chunks, its string columns' indices kept
// until the row group's last batch, which writes them with the row group's
// dictionaries and closes the row group. The Arrow arrays alias the
// batch's slices: the writer copies what it keeps, so the batch can be
// refilled once write returns.
func (t *pqTable) write(b *pqBatch) error {
	if t.rg == nil {
		rg, err := t.fw.AppendBufferedRowGroupChecked()
		if err != nil {
			return err
		}
		t.rg = rg
	}
	for i, f := range t.schema.Fields() {
		c := &b.cols[i]
		var buf []byte
		switch f.Type.ID() {
		case arrow.UINT64:
			buf = arrow.Uint64Traits.CastToBytes(c.u64[:b.n])
		case arrow.UINT32:
			buf = arrow.Uint32Traits.CastToBytes(c.u32[:b.n])
		case arrow.INT32:
			buf = arrow.Int32Traits.CastToBytes(c.i32[:b.n])
		case arrow.FLOAT64:
			buf = arrow.Float64Traits.CastToBytes(c.f64[:b.n])
		case arrow.DICTIONARY:
			if t.indices[i] == nil {
				t.indices[i] = make([]int32, 0, pqGroupRows)
			}
			t.indices[i] = append(t.indices[i], c.i32[:b.n]...)
			continue
		}
		if b.n == 0 {
			continue
		}
		if err := t.writeColumn(i, array.NewData(f.Type, b.n, []*memory.Buffer{nil, memory.NewBufferBytes(buf)}, nil, 0, 0)); err != nil {
			return err
		}
	}
	if !b.last {
		t.big.Store(t.rg.TotalCompressedBytes() >= pqGroupPageBytes)
		return nil
	}
	t.big.Store(false)
	for i, f := range t.schema.Fields() {
		if f.Type.ID() != arrow.DICTIONARY {
			continue
		}
		idx := t.indices[i]
		t.indices[i] = idx[:0]
		if err := t.writeDictColumn(i, f.Type, idx, b.dict[i]); err != nil {
			return err
		}
	}
	rg := t.rg
	t.rg = nil
	return rg.Close()
}

// writeColumn writes one column's values into the open row group.
func (t *pqTable) writeColumn(i int, data arrow.ArrayData) error {
	arr := array.MakeFromData(data)
	data.Release()
	defer arr.Release()
	cw, err := t.rg.Column(i)
	if err != nil {
		return err
	}
	return pqarrow.WriteArrowToColumn(t.ctx, cw, arr, nil, nil, false)
}

// writeDictColumn writes a string column of a row group: its indices into
// dict, the row group's distinct strings.
func (t *pqTable) writeDictColumn(i int, typ arrow.DataType, idx []int32, dict []string) error {
	data := array.NewData(arrow.PrimitiveTypes.Int32, len(idx),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))}, nil, 0, 0)
	indices := array.MakeFromData(data)
	data.Release()
	defer indices.Release()
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues(dict, nil)
	values := sb.NewArray()
	sb.Release()
	defer values.Release()
	arr := array.NewDictionaryArray(typ, indices, values)
	defer arr.Release()
	cw, err := t.rg.Column(i)
	if err != nil {
		return err
	}
	return pqarrow.WriteArrowToColumn(t.ctx, cw, arr, nil, nil, false)
}

// pqDictIndex finds a batch's dictionary index of a string column's value
// by the id it comes from (function, kernel, agent, enum value) or, for
// free text, by the text. Every name appears once in a row group's dictionary
// (two ids may share a name: -T folds template instances together), as
// Parquet's dictionary encoder wants.
type pqDictIndex struct {
	ids  map[uint64]int32
	strs map[string]int32
}

func (d *pqDictIndex) clear() {
	clear(d.ids)
	clear(d.strs)
}

// dictID stores the index of id's name in row n of column i; false means
// the id is not in the row group's dictionary yet (call dictAdd).
func (t *pqTable) dictID(i, n int, id uint64) bool {
	x, ok := t.dicts[i].ids[id]
	if ok {
		t.cur.cols[i].i32[n] = x
	}
	return ok
}

// dictAdd stores name in row n of column i and remembers it under id.
func (t *pqTable) dictAdd(i, n int, id uint64, name string) {
	d := &t.dicts[i]
	if d.ids == nil {
		d.ids = map[uint64]int32{}
	}
	d.ids[id] = t.dictString(i, n, name)
}

// dictString stores s in row n of column i and returns its index.
func (t *pqTable) dictString(i, n int, s string) int32 {
	d := &t.dicts[i]
	x, ok := d.strs[s]
	if !ok {
		if d.strs == nil {
			d.strs = map[string]int32{}
		}
		x = int32(len(t.groupDict[i]))
		t.groupDict[i] = append(t.groupDict[i], s)
		t.groupDictBytes += len(s)
		d.strs[s] = x
	}
	t.cur.cols[i].i32[n] = x
	return x
}

// dictBytes is dictString for text that aliases the spool: it is copied
// only the first time a row group sees it.
func (t *pqTable) dictBytes(i, n int, s []byte) {
	d := &t.dicts[i]
	c := &t.cur.cols[i]
	x, ok := d.strs[string(s)]
	if !ok {
		t.dictString(i, n, string(s))
		return
	}
	c.i32[n] = x
}
