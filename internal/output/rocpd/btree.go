package rocpd

// The bulk tables of a ROCpd database (events, regions, samples,
// dispatches, copies, allocations, counter values) are written as SQLite
// b-tree pages by this file rather than by SQLite's INSERT machinery, which
// cost about 1 µs a row (most of the writer's time). SQLite still creates
// the schema and writes every small table; the two take turns on the file:
//
//  1. SQLite (a connection opened, used, closed) creates the schema, whose
//     bulk tables are left empty: each is one empty leaf, its root page.
//  2. This writer appends the bulk rows as table-leaf pages after SQLite's
//     last page, in rowid order, and raises the header's page count.
//  3. SQLite may run again (another process's catalogue, the strings): it
//     appends its new pages after ours, knowing nothing of them.
//  4. At the end the interior pages of each bulk table are appended and the
//     table's top node is written over its root page, which makes the rows
//     part of the database.
//
// Every page is thus reachable exactly once and the file passes PRAGMA
// integrity_check. The page and record layouts are SQLite's documented file
// format (https://www.sqlite.org/fileformat2.html).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
	"syscall"
)

// pageWriteBuffer is how many bytes of finished pages are written at once.
const pageWriteBuffer = 1 << 20

// pageFile appends pages to a SQLite database file between SQLite's turns.
type pageFile struct {
	f        *os.File
	pageSize int
	usable   int    // page size less the reserved bytes at each page's end
	pages    uint32 // pages in the file, SQLite's and ours
	format4  bool   // schema format 4: serial types 8 and 9 (integers 0 and 1)
	buf      []byte // finished pages not yet written, the last len(buf)/pageSize ones
	err      error  // the first write error; later writes are skipped
}

// openPageFile opens a database SQLite has just closed and reads its header.
func openPageFile(path string) (*pageFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	pf := &pageFile{f: f}
	if err := pf.readHeader(); err != nil {
		f.Close()
		return nil, err
	}
	pf.buf = make([]byte, 0, pageWriteBuffer+pf.pageSize)
	return pf, nil
}

// readHeader takes the page size and count from the database header after
// SQLite's turn, and checks the file is what this writer can extend.
func (pf *pageFile) readHeader() error {
	var h [100]byte
	if _, err := pf.f.ReadAt(h[:], 0); err != nil {
		return fmt.Errorf("rocpd: read database header: %w", err)
	}
	be := binary.BigEndian
	size := int(be.Uint16(h[16:]))
	if size == 1 {
		size = 65536
	}
	if string(h[:16]) != "SQLite format 3\x00" || size < 512 || size&(size-1) != 0 {
		return errors.New("rocpd: not a SQLite database header")
	}
	if h[56+3] != 1 { // text encoding (big-endian 4 bytes at 56)
		return errors.New("rocpd: database text encoding is not UTF-8")
	}
	pf.pageSize, pf.usable = size, size-int(h[20])
	pf.format4 = be.Uint32(h[44:]) >= 4
	pages := be.Uint32(h[28:])
	if pages == 0 || be.Uint32(h[24:]) != be.Uint32(h[92:]) {
		return errors.New("rocpd: database header page count is not valid")
	}
	st, err := pf.f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != int64(pages)*int64(size) {
		return fmt.Errorf("rocpd: database is %d bytes, header says %d pages of %d", st.Size(), pages, size)
	}
	pf.pages = pages
	return nil
}

// alloc appends a finished page and returns its number.
func (pf *pageFile) alloc(page []byte) uint32 {
	pf.buf = append(pf.buf, page[:pf.pageSize]...)
	pf.pages++
	if len(pf.buf) >= pageWriteBuffer {
		pf.flush()
	}
	return pf.pages
}

// flush writes the buffered pages.
func (pf *pageFile) flush() {
	if len(pf.buf) == 0 {
		return
	}
	if pf.err == nil {
		first := int64(pf.pages) - int64(len(pf.buf)/pf.pageSize) // pages before the buffer's first
		_, pf.err = pf.f.WriteAt(pf.buf, first*int64(pf.pageSize))
	}
	pf.buf = pf.buf[:0]
}

// writePage overwrites an existing page (a root page SQLite created).
func (pf *pageFile) writePage(pgno uint32, page []byte) {
	if pf.err == nil {
		_, pf.err = pf.f.WriteAt(page[:pf.pageSize], int64(pgno-1)*int64(pf.pageSize))
	}
}

// sync writes what is buffered and the header's page count, so that
// SQLite's next turn sees (and appends after) every page.
func (pf *pageFile) sync() error {
	pf.flush()
	if pf.err == nil {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], pf.pages)
		_, pf.err = pf.f.WriteAt(n[:], 28)
	}
	return pf.err
}

func (pf *pageFile) close() error {
	err := pf.f.Close()
	if pf.err != nil {
		return pf.err
	}
	return err
}

// record builds one row in SQLite's record format: a header of serial
// types, then the values. The header is built as the columns come, less
// its leading size varint.
type record struct {
	hdr    []byte
	body   []byte
	format bool // format4
}

func (r *record) reset() {
	r.hdr = r.hdr[:0]
	r.body = r.body[:0]
}

// null adds a NULL (also the INTEGER PRIMARY KEY column, which SQLite keeps
// as the rowid only).
func (r *record) null() { r.hdr = append(r.hdr, 0) }

// intSerial is the serial type and size of an integer by its significant
// bits (two's complement, sign excluded): the fewest of 1, 2, 3, 4, 6 or 8
// bytes that hold it.
var intSerial = func() (t [65]struct{ typ, size byte }) {
	for n := range t {
		switch {
		case n <= 7:
			t[n].typ, t[n].size = 1, 1
		case n <= 15:
			t[n].typ, t[n].size = 2, 2
		case n <= 23:
			t[n].typ, t[n].size = 3, 3
		case n <= 31:
			t[n].typ, t[n].size = 4, 4
		case n <= 47:
			t[n].typ, t[n].size = 5, 6
		default:
			t[n].typ, t[n].size = 6, 8
		}
	}
	return t
}()

// int adds an integer in the fewest bytes; sqlNull adds NULL.
func (r *record) int(v int64) {
	if uint64(v) <= 1 && r.format {
		r.hdr = append(r.hdr, 8+byte(v))
		return
	}
	if v == sqlNull {
		r.hdr = append(r.hdr, 0)
		return
	}
	s := intSerial[bits.Len64(uint64(v^(v>>63)))]
	r.hdr = append(r.hdr, s.typ)
	n := len(r.body)
	if cap(r.body)-n < 8 {
		r.body = slices.Grow(r.body, 8)
	}
	// All 8 bytes written, the value's last s.size kept.
	binary.BigEndian.PutUint64(r.body[n:n+8], uint64(v)<<(64-8*uint(s.size)))
	r.body = r.body[:n+int(s.size)]
}

// real adds a float64.
func (r *record) real(f float64) {
	r.hdr = append(r.hdr, 7)
	r.body = binary.BigEndian.AppendUint64(r.body, math.Float64bits(f))
}

// text adds a UTF-8 string.
func (r *record) text(s string) {
	if t := 2*len(s) + 13; t <= 0x7f {
		r.hdr = append(r.hdr, byte(t))
	} else {
		var v [9]byte
		r.hdr = append(r.hdr, v[:putVarint(v[:], uint64(t))]...)
	}
	r.body = append(r.body, s...)
}

// headerLen is the record header's size in bytes, its own length included.
func (r *record) headerLen() int {
	n := len(r.hdr)
	// The size varint counts itself.
	if n+1 <= 0x7f {
		return n + 1
	}
	h := n + 2
	for varintLen(uint64(h)) != h-n {
		h++
	}
	return h
}

// put writes the record (header, then body) to dst, which must be exactly
// long enough.
func (r *record) put(dst []byte, hdr int) {
	o := putVarint1(dst, uint64(hdr))
	o += copy(dst[o:], r.hdr)
	copy(dst[o:], r.body)
}

func varintLen(v uint64) int {
	switch {
	case v <= 0x7f:
		return 1
	case v <= 0x3fff:
		return 2
	case v > 0x00ffffffffffffff:
		return 9
	}
	n := 0
	for ; v != 0; v >>= 7 {
		n++
	}
	return n
}

// putVarint1 is putVarint with its one-byte case inlined.
func putVarint1(dst []byte, v uint64) int {
	if v <= 0x7f {
		dst[0] = byte(v)
		return 1
	}
	return putVarint(dst, v)
}

// putVarint writes SQLite's big-endian varint (7 bits a byte, the 9th byte
// holding 8) and returns its length.
func putVarint(dst []byte, v uint64) int {
	if v <= 0x7f {
		dst[0] = byte(v)
		return 1
	}
	if v > 0x00ffffffffffffff {
		dst[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			dst[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return 9
	}
	n := varintLen(v)
	for i := n - 1; i >= 0; i-- {
		dst[i] = byte(v&0x7f) | 0x80
		v >>= 7
	}
	dst[n-1] &= 0x7f
	return n
}

// btreeChild is a finished page of a table b-tree and its largest rowid.
type btreeChild struct {
	page uint32
	key  int64
}

// btreeTable fills one table's b-tree in rowid order.
type btreeTable struct {
	pf       *pageFile
	name     string
	root     uint32 // the root page SQLite made
	leaf     []byte // the leaf being filled
	cells    int
	top      int          // start of the cell content area
	held     []byte       // the first full leaf, written once a second exists
	children []btreeChild // leaves written, in order
	last     int64        // largest rowid so far
	rows     int64
	payload  []byte // a record that spills to overflow pages
	rec      record
}

func newBtreeTable(pf *pageFile, name string, root uint32) *btreeTable {
	t := &btreeTable{pf: pf, name: name, root: root, leaf: make([]byte, pf.pageSize), last: math.MinInt64}
	t.rec.format = pf.format4
	t.resetLeaf()
	return t
}

func (t *btreeTable) resetLeaf() {
	clear(t.leaf)
	t.leaf[0] = 0x0d // table leaf
	t.cells, t.top = 0, t.pf.usable
}

// row starts a row; the caller adds every column to the returned record in
// table order, then calls end with the rowid.
func (t *btreeTable) row() *record {
	t.rec.reset()
	return &t.rec
}

// end stores the row built in t.rec under rowid id, which must exceed every
// rowid before it.
func (t *btreeTable) end(id int64) error {
	if id <= t.last {
		return fmt.Errorf("rocpd: %s row id %d after %d", t.name, id, t.last)
	}
	r := &t.rec
	hdr := r.headerLen()
	size := hdr + len(r.body)
	local, spill := size, false
	usable := t.pf.usable
	if maxLocal := usable - 35; size > maxLocal {
		minLocal := (usable-12)*32/255 - 23
		local = minLocal + (size-minLocal)%(usable-4)
		if local > maxLocal {
			local = minLocal
		}
		spill = true
	}
	cell := varintLen(uint64(size)) + varintLen(uint64(id)) + local
	if spill {
		cell += 4
	}
	if 8+2*(t.cells+1) > t.top-cell {
		t.finishLeaf()
	}
	t.top -= cell
	c := t.leaf[t.top : t.top+cell]
	o := putVarint1(c, uint64(size))
	o += putVarint1(c[o:], uint64(id))
	if !spill {
		r.put(c[o:], hdr)
	} else {
		// The whole record, then its tail on a chain of overflow pages,
		// numbered from the next page on.
		if cap(t.payload) < size {
			t.payload = make([]byte, size)
		}
		p := t.payload[:size]
		r.put(p, hdr)
		copy(c[o:], p[:local])
		rest := p[local:]
		first := t.pf.pages + 1
		binary.BigEndian.PutUint32(c[o+local:], first)
		page := make([]byte, t.pf.pageSize)
		for next := first + 1; len(rest) > 0; next++ {
			clear(page)
			n := copy(page[4:usable], rest)
			rest = rest[n:]
			if len(rest) > 0 {
				binary.BigEndian.PutUint32(page, next)
			}
			t.pf.alloc(page)
		}
	}
	binary.BigEndian.PutUint16(t.leaf[8+2*t.cells:], uint16(t.top))
	t.cells++
	t.last = id
	t.rows++
	return t.pf.err
}

// finishLeaf closes the leaf being filled and starts another.
func (t *btreeTable) finishLeaf() {
	binary.BigEndian.PutUint16(t.leaf[3:], uint16(t.cells))
	binary.BigEndian.PutUint16(t.leaf[5:], uint16(t.top&0xffff))
	switch {
	case t.held == nil && len(t.children) == 0:
		// Maybe the table's only leaf, which then belongs in the root page.
		t.held = append([]byte(nil), t.leaf...)
	default:
		if t.held != nil {
			t.children = append(t.children, btreeChild{t.pf.alloc(t.held), t.lastKey(t.held)})
			t.held = nil
		}
		t.children = append(t.children, btreeChild{t.pf.alloc(t.leaf), t.last})
	}
	t.resetLeaf()
}

// lastKey is the rowid of a held leaf's last cell.
func (t *btreeTable) lastKey(leaf []byte) int64 {
	n := int(binary.BigEndian.Uint16(leaf[3:]))
	c := leaf[binary.BigEndian.Uint16(leaf[8+2*(n-1):]):]
	_, o := getVarint(c)
	k, _ := getVarint(c[o:])
	return int64(k)
}

func getVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v<<8 | uint64(b[8]), 9
}

// finish writes the rest of the table and links it to its root page.
func (t *btreeTable) finish() error {
	if t.rows == 0 {
		return nil // SQLite's empty root leaf stays
	}
	if t.held == nil && len(t.children) == 0 {
		binary.BigEndian.PutUint16(t.leaf[3:], uint16(t.cells))
		binary.BigEndian.PutUint16(t.leaf[5:], uint16(t.top&0xffff))
		t.pf.writePage(t.root, t.leaf)
		return t.pf.err
	}
	if t.cells > 0 {
		t.finishLeaf()
	}
	if t.held != nil { // a full first leaf and nothing after it
		t.pf.writePage(t.root, t.held)
		t.held = nil
		return t.pf.err
	}
	// Interior levels, bottom up, until one node holds them all: the root.
	// A cell is a 4-byte child page and a varint key (9 bytes at most)
	// plus its 2-byte pointer.
	most := (t.pf.usable - 12) / 15
	page := make([]byte, t.pf.pageSize)
	level := t.children
	for len(level) > most {
		nodes := (len(level) + most - 1) / most
		next := make([]btreeChild, 0, nodes)
		for i := 0; i < nodes; i++ {
			part := level[i*len(level)/nodes : (i+1)*len(level)/nodes]
			interiorPage(page, part, t.pf.usable)
			next = append(next, btreeChild{t.pf.alloc(page), part[len(part)-1].key})
		}
		level = next
	}
	interiorPage(page, level, t.pf.usable)
	t.pf.writePage(t.root, page)
	t.children = nil
	return t.pf.err
}

// interiorPage lays out a table-interior page over children (two or more):
// a cell (child, its largest key) for all but the last, which is the
// right-most pointer.
func interiorPage(page []byte, children []btreeChild, usable int) {
	clear(page)
	page[0] = 0x05
	n := len(children) - 1
	binary.BigEndian.PutUint16(page[3:], uint16(n))
	binary.BigEndian.PutUint32(page[8:], children[n].page)
	top := usable
	var cell [13]byte
	for i, c := range children[:n] {
		binary.BigEndian.PutUint32(cell[:], c.page)
		l := 4 + putVarint(cell[4:], uint64(c.key))
		top -= l
		copy(page[top:], cell[:l])
		binary.BigEndian.PutUint16(page[12+2*i:], uint16(top))
	}
	binary.BigEndian.PutUint16(page[5:], uint16(top&0xffff))
}

// appendSQLiteJSON quotes s as SQLite's JSON functions do: '"' and '\' escaped,
// control characters as \b \t \n \f \r or \u00xx, everything else as is.
func appendSQLiteJSON(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
