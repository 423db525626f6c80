package rocpd

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// btreeTestRow is one row of the page writer's test table.
type btreeTestRow struct {
	id int64
	a  int64 // sqlNull: NULL
	b  string
	c  float64
}

// btreeTestRows makes n rows with every integer size, NULLs, and texts
// from empty to several pages long (overflow chains).
func btreeTestRows(n int, seed int64) []btreeTestRow {
	ints := []int64{0, 1, -1, 127, -128, 128, 32767, -32769, 8388607, -8388609, math.MaxInt32,
		math.MinInt32 - 1, 1 << 46, -1 << 47, 1<<47 + 3, math.MaxInt64, math.MinInt64 + 1, sqlNull}
	rows := make([]btreeTestRow, n)
	id := seed
	for i := range rows {
		id += 1 + int64(i%3)*1000 // gaps between rowids
		text := strings.Repeat(string(rune('a'+i%26)), i%37)
		if i%997 == 5 {
			text = strings.Repeat("long row 'quoted' ", 40+i%300) // 720 to 6100 bytes
		}
		rows[i] = btreeTestRow{id: id, a: ints[i%len(ints)], b: text, c: float64(i) / 7}
	}
	return rows
}

func btreeRowSQL(table string, r btreeTestRow) string {
	a := "NULL"
	if r.a != sqlNull {
		a = fmt.Sprint(r.a)
	}
	return fmt.Sprintf("INSERT INTO %s (id, g, a, b, c, e) VALUES (%d, 'guid', %s, %s, %s, '{}');\n",
		table, r.id, a, sqlText(r.b), fmt.Sprintf("%.17g", r.c))
}

// TestROCpdPageWriterMatchesSQLite fills tables through the page writer on
// small pages (deep trees, long overflow chains, a one-leaf table, an
// empty one), lets SQLite append after them, and compares every value and
// type with the same rows inserted by SQLite.
func TestROCpdPageWriterMatchesSQLite(t *testing.T) {
	dir := t.TempDir()
	ours, ref := filepath.Join(dir, "ours.db"), filepath.Join(dir, "ref.db")
	sizes := map[string]int{"t_empty": 0, "t_one": 1, "t_few": 9, "t_deep": 30000}
	names := []string{"t_empty", "t_one", "t_few", "t_deep", "t_after"}
	schema := "PRAGMA page_size=512; PRAGMA journal_mode=OFF;"
	for _, n := range names {
		schema += "CREATE TABLE " + n + ` (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, g TEXT DEFAULT "x" NOT NULL,
			a INTEGER, b TEXT, c REAL, e JSONB DEFAULT "{}" NOT NULL);`
	}
	var refSQL strings.Builder
	refSQL.WriteString(schema + "BEGIN;")
	db, err := openSQLite(ours)
	require.NoError(t, err)
	require.NoError(t, db.exec(schema))
	roots := map[string]uint32{}
	for _, n := range names {
		root, err := db.queryInt("SELECT rootpage FROM sqlite_master WHERE name = '" + n + "'")
		require.NoError(t, err)
		roots[n] = uint32(root)
	}
	require.NoError(t, db.close())

	pf, err := openPageFile(ours)
	require.NoError(t, err)
	require.Equal(t, 512, pf.pageSize)
	var tables []*btreeTable
	for i, n := range names[:4] {
		tb := newBtreeTable(pf, n, roots[n])
		tables = append(tables, tb)
		for _, r := range btreeTestRows(sizes[n], int64(i)) {
			rec := tb.row()
			rec.null()
			rec.text("guid")
			rec.int(r.a)
			rec.text(r.b)
			rec.real(r.c)
			rec.text("{}")
			require.NoError(t, tb.end(r.id))
			refSQL.WriteString(btreeRowSQL(n, r))
		}
	}
	// Rowids must grow.
	rec := tables[1].row()
	rec.null()
	require.ErrorContains(t, tables[1].end(1), "row id 1 after")
	// SQLite's turn between the page writer's: it appends after our pages.
	require.NoError(t, pf.sync())
	db, err = openSQLite(ours)
	require.NoError(t, err)
	var after strings.Builder
	after.WriteString("PRAGMA journal_mode=OFF; BEGIN;")
	for _, r := range btreeTestRows(500, 7) {
		after.WriteString(btreeRowSQL("t_after", r))
	}
	require.NoError(t, db.exec(after.String()+"COMMIT"))
	require.NoError(t, db.close())
	refSQL.WriteString(strings.TrimPrefix(after.String(), "PRAGMA journal_mode=OFF; BEGIN;"))
	require.NoError(t, pf.readHeader())
	for _, tb := range tables {
		require.NoError(t, tb.finish())
	}
	require.NoError(t, pf.sync())
	require.NoError(t, pf.close())

	rdb, err := openSQLite(ref)
	require.NoError(t, err)
	require.NoError(t, rdb.exec(refSQL.String()+"COMMIT"))
	require.NoError(t, rdb.close())

	require.Equal(t, "ok", outputtest.SQLite3CLI(t, ours, "PRAGMA integrity_check"))
	require.Equal(t, "0", outputtest.SQLite3CLI(t, ours, "PRAGMA freelist_count"))
	require.Greater(t, outputtest.SQLiteCount(t, ours, "t_deep"), uint64(29999))
	// A deep tree: the root's children are interior pages.
	// A deep tree: more interior pages than one root can point to (33 on
	// 512-byte pages), so interior pages under interior pages.
	require.Greater(t, outputtest.SQLiteCount(t, ours, "dbstat WHERE name = 't_deep' AND pagetype = 'internal'"), uint64(34))
	require.Greater(t, outputtest.SQLiteCount(t, ours, "dbstat WHERE name = 't_deep' AND pagetype = 'overflow'"), uint64(100))
	for _, n := range names {
		q := "SELECT id, g, quote(a), typeof(a), quote(b), quote(c), typeof(c), e, typeof(e) FROM " + n + " ORDER BY id"
		require.Equal(t, outputtest.SQLite3CLI(t, ref, q), outputtest.SQLite3CLI(t, ours, q), n)
		// Look-ups by rowid walk the interior pages.
		for _, id := range []string{"1", "2", "1001", "15000000"} {
			q := "SELECT quote(b) FROM " + n + " WHERE id = " + id
			require.Equal(t, outputtest.SQLite3CLI(t, ref, q), outputtest.SQLite3CLI(t, ours, q), n+" id "+id)
		}
	}
}

// TestROCpdJSONLikeSQLite checks the marker message JSON against the
// linked SQLite's json_object for every byte and some UTF-8.
func TestROCpdJSONLikeSQLite(t *testing.T) {
	db, err := sql.Open("sqlite3", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	var all []byte
	for c := 1; c < 256; c++ {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "iteration 0", `a "quoted" \ back\slash`, "tab\tnew\nline\r\f\b",
		"\x00nul", "π ≈ 3.14159 😀", "it's", string(all), "\x7f\x1f\x01"} {
		var want string
		require.NoError(t, db.QueryRow("SELECT json_object('message', CAST(? AS TEXT))", s).Scan(&want))
		w := &rocpdWriter{}
		require.Equal(t, want, w.markerJSON(s), "%q", s)
	}
}

// TestROCpdLongMarkerMessage writes a ROCTx message longer than a page:
// its event row spills to overflow pages.
func TestROCpdLongMarkerMessage(t *testing.T) {
	info := outputtest.Info(31)
	b := spooltest.New(info)
	long := strings.Repeat("0123456789abcdef", 3000) // 48000 bytes: three overflow pages
	for i := 0; i < 50; i++ {
		msg := []byte(fmt.Sprintf("short %d", i))
		if i%10 == 3 {
			msg = []byte(long + fmt.Sprint(i))
		}
		b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange, TID: 31,
			Start: uint64(1000 + 10*i), End: uint64(1005 + 10*i), Message: msg})
	}
	path, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	db := filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, Write(db, &model.Input{Spools: []string{path}}))
	require.Equal(t, "ok", outputtest.SQLite3CLI(t, db, "PRAGMA integrity_check"))
	require.Empty(t, outputtest.SQLite3CLI(t, db, "PRAGMA foreign_key_check"))
	require.Equal(t, "50", outputtest.SQLite3CLI(t, db, "SELECT COUNT(*) FROM regions"))
	require.Equal(t, fmt.Sprint(len(long)+1), outputtest.SQLite3CLI(t, db,
		"SELECT length(json_extract(extdata, '$.message')) FROM regions ORDER BY start LIMIT 1 OFFSET 3"))
	require.Equal(t, "1", outputtest.SQLite3CLI(t, db,
		"SELECT json_extract(extdata, '$.message') = '"+long+"3' FROM regions ORDER BY start LIMIT 1 OFFSET 3"))
	require.Equal(t, "short 4", outputtest.SQLite3CLI(t, db,
		"SELECT json_extract(extdata, '$.message') FROM regions ORDER BY start LIMIT 1 OFFSET 4"))
}

// TestROCpdPageFileRejectsForeignFile: the page writer extends only a
// database whose header it understands.
func TestROCpdPageFileRejectsForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	require.NoError(t, os.WriteFile(path, make([]byte, 4096), 0o644))
	_, err := openPageFile(path)
	require.ErrorContains(t, err, "not a SQLite database")
	// A header whose page count disagrees with the file's size.
	db, err := openSQLite(path + "2")
	require.NoError(t, err)
	require.NoError(t, db.exec("CREATE TABLE t (x)"))
	require.NoError(t, db.close())
	f, err := os.OpenFile(path+"2", os.O_RDWR, 0)
	require.NoError(t, err)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], 7)
	_, err = f.WriteAt(n[:], 28)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = openPageFile(path + "2")
	require.ErrorContains(t, err, "header says 7 pages")
}

// TestROCpdUndescribedAgent: a dispatch on an agent the spool never
// described still gets its agent row (written in SQLite's last turn), so
// the foreign keys hold.
func TestROCpdUndescribedAgent(t *testing.T) {
	b := spooltest.New(outputtest.Info(32))
	b.Add(outputtest.AgentRecord(1, 1, 0, tracing.AgentGPU, "gfx90a"))
	b.Add(tracing.KernelDispatch{AgentNode: 5, TID: 32, QueueID: 1, DispatchID: 1, KernelID: 1, CorrelationID: 1,
		Start: 100, End: 200, Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}})
	path, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	db := filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, Write(db, &model.Input{Spools: []string{path}}))
	require.Empty(t, outputtest.SQLite3CLI(t, db, "PRAGMA foreign_key_check"))
	require.Equal(t, "1|GPU\n5|GPU", outputtest.SQLite3CLI(t, db, "SELECT id, type FROM rocpd_info_agent ORDER BY id"))
	require.Equal(t, "5", outputtest.SQLite3CLI(t, db, "SELECT agent_id FROM rocpd_kernel_dispatch"))
}

func TestROCpdDispatchSet(t *testing.T) {
	dense := map[uint64]struct{}{1: {}, 5: {}, 63: {}, 64: {}, 200: {}}
	sparse := map[uint64]struct{}{3: {}, 1 << 40: {}}
	for _, m := range []map[uint64]struct{}{dense, sparse, {}} {
		s := newDispatchSet(m)
		for id := uint64(0); id < 300; id++ {
			_, want := m[id]
			require.Equal(t, want, s.has(id), id)
		}
		require.Equal(t, len(m) == 2, s.has(1<<40))
		require.False(t, s.has(1<<40+1))
	}
	require.NotNil(t, newDispatchSet(dense).bits)
	require.Nil(t, newDispatchSet(sparse).bits)
}

// TestROCpdWriteErrorRemovesFile: when the page writer cannot write (here
// the file size limit, as a full disk would), Write fails with the
// system's error and leaves no partial database.
func TestROCpdWriteErrorRemovesFile(t *testing.T) {
	spool := outputtest.WriteSpools(t, t.TempDir(), []int32{33}, 20000)[0]
	db := filepath.Join(t.TempDir(), "results.db")
	// 4096 blocks (2 or 4 MiB): the schema fits, the events do not.
	cmd := exec.Command("sh", "-c", `ulimit -f 4096 && exec "$0" -test.run '^TestROCpdWriteErrorChild$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "ROCPROF_GO_ROCPD_CHILD="+spool+"|"+db)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "write error: ")
	require.Contains(t, string(out), "file too large")
	require.NoFileExists(t, db)
}

// TestROCpdWriteErrorChild is TestROCpdWriteErrorRemovesFile's child; it
// does nothing in a normal test run.
func TestROCpdWriteErrorChild(t *testing.T) {
	spec := os.Getenv("ROCPROF_GO_ROCPD_CHILD")
	if spec == "" {
		return
	}
	spool, db, _ := strings.Cut(spec, "|")
	err := Write(db, &model.Input{Spools: []string{spool}})
	require.Error(t, err)
	fmt.Println("write error:", err)
}

// FuzzROCpdPageWriter writes rows made from the input with the page writer
// on 512-byte pages and reads them back through SQLite: every value comes
// back and the file passes integrity_check.
func FuzzROCpdPageWriter(f *testing.F) {
	f.Add([]byte("\x01\x02hello\x00\x00\x00\x00\x00\x00\x00\x80"), uint16(3))
	f.Add([]byte(strings.Repeat("long text spilling to overflow pages ", 60)), uint16(700))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 1}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, rows uint16) {
		n := int(rows % 3000)
		path := filepath.Join(t.TempDir(), "f.db")
		db, err := openSQLite(path)
		require.NoError(t, err)
		require.NoError(t, db.exec(`PRAGMA page_size=512; CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)`))
		root, err := db.queryInt("SELECT rootpage FROM sqlite_master WHERE name = 't'")
		require.NoError(t, err)
		require.NoError(t, db.close())
		pf, err := openPageFile(path)
		require.NoError(t, err)
		tb := newBtreeTable(pf, "t", uint32(root))
		type row struct {
			a int64
			b string
			c float64
		}
		want := make([]row, n)
		le := binary.LittleEndian
		for i := range want {
			var v [8]byte
			if len(data) > 0 {
				copy(v[:], data[i%len(data):])
			}
			a := int64(le.Uint64(v[:])) >> (i % 64)
			if a == sqlNull {
				a++
			}
			text := ""
			if len(data) > 0 {
				text = strings.ToValidUTF8(string(data[:(i*7)%(len(data)+1)]), "?")
				text = strings.ReplaceAll(text, "\x00", "0")
			}
			want[i] = row{a, text, float64(i) * 1.5}
			rec := tb.row()
			rec.null()
			rec.int(a)
			rec.text(text)
			rec.real(want[i].c)
			require.NoError(t, tb.end(int64(i)*3+1))
		}
		require.NoError(t, tb.finish())
		require.NoError(t, pf.sync())
		require.NoError(t, pf.close())

		sdb, err := sql.Open("sqlite3", path)
		require.NoError(t, err)
		defer sdb.Close()
		var check string
		require.NoError(t, sdb.QueryRow("PRAGMA integrity_check").Scan(&check))
		require.Equal(t, "ok", check)
		rs, err := sdb.Query("SELECT id, a, b, c FROM t ORDER BY id")
		require.NoError(t, err)
		defer rs.Close()
		i := 0
		for rs.Next() {
			var id, a int64
			var b string
			var c float64
			require.NoError(t, rs.Scan(&id, &a, &b, &c))
			require.Equal(t, int64(i)*3+1, id)
			require.Equal(t, want[i], row{a, b, c}, "row %d", i)
			i++
		}
		require.NoError(t, rs.Err())
		require.Equal(t, n, i)
	})
}
