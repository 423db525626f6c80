package rocpdread

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/sqlitefd"
)

// MergeResult reports what a merge wrote.
type MergeResult struct {
	Images int              // process images in the output
	Rows   map[string]int64 // rows copied per base table, summed over images
	Views  []string         // data views carried over from the inputs
	Warn   []string         // views that could not be re-created
}

// Merge writes a database holding every input's suffixed tables, with each
// un-suffixed view a UNION ALL over all images — the layout rocpd builds in
// memory when given several databases, stored in one file so any SQLite
// client sees all ranks at once. Rows are copied with INSERT … SELECT across
// ATTACHed files, so memory stays bounded by SQLite's page cache whatever
// the input size. The output appears only when complete (written under a
// temporary name, then renamed).
func Merge(ctx context.Context, out string, inputs []string) (*MergeResult, error) {
	if len(inputs) == 0 {
		return nil, errors.New("merge: no input databases")
	}
	for _, in := range inputs {
		if sameFile(in, out) {
			return nil, fmt.Errorf("merge: output %s is also an input; choose another --output", out)
		}
	}
	// A new temporary file beside out (never a symlink someone planted:
	// O_EXCL|O_NOFOLLOW), renamed onto out when SQLite has closed it.
	f, err := atomicfile.Create(out, atomicfile.Public)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	// SQLite opens the temporary file through its directory's descriptor
	// (atomicfile's TempPath), not by re-resolving the path.
	if err := sqlitefd.Install(); err != nil {
		f.Abort()
		return nil, fmt.Errorf("merge: %w", err)
	}
	res, err := merge(ctx, f.TempPath(), inputs)
	if err != nil {
		f.Abort()
		return nil, err
	}
	if err := f.Commit(); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return res, nil
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

type mergedTable struct {
	base   string
	tables []string // suffixed names, in image order
	cols   string   // column list of the first image, to check the others
}

func merge(ctx context.Context, path string, inputs []string) (*MergeResult, error) {
	sdb, err := sql.Open("sqlite3", openURI(path, "rwc")+"&_journal_mode=OFF&_synchronous=OFF")
	if err != nil {
		return nil, err
	}
	defer sdb.Close()
	// ATTACH is per connection: keep one.
	sdb.SetMaxOpenConns(1)
	conn, err := sdb.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -32768`); err != nil {
		return nil, err
	}
	res := &MergeResult{Rows: map[string]int64{}}
	tables := map[string]*mergedTable{}
	var order []string
	views := map[string]string{}
	var viewOrder []string
	seen := map[string]string{} // suffix -> input
	for _, in := range inputs {
		// Validate with the reader first: clear errors for non-ROCpd files.
		db, err := Open(in)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		images := db.Images
		db.Close()
		for _, im := range images {
			if im.Suffix == "" {
				return nil, fmt.Errorf("merge: %s has tables without a uuid suffix; "+
					"only databases with per-process table names can be merged", in)
			}
			if prev, dup := seen[im.Suffix]; dup {
				return nil, fmt.Errorf("merge: uuid %s is in both %s and %s: the same process given twice?",
					im.GUID, prev, in)
			}
			seen[im.Suffix] = in
		}
		if err := copyInput(ctx, conn, in, images, tables, &order, views, &viewOrder, res); err != nil {
			return nil, fmt.Errorf("merge %s: %w", in, err)
		}
		res.Images += len(images)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	for _, base := range order {
		if err := createUnionView(ctx, tx, base, tables[base].tables); err != nil {
			return nil, fmt.Errorf("merge: view %s: %w", base, err)
		}
	}
	for _, name := range viewOrder {
		// Data views are written against the un-suffixed names, so the
		// first input's definition serves all images.
		if _, err := tx.ExecContext(ctx, views[name]); err != nil {
			res.Warn = append(res.Warn, fmt.Sprintf("view %s not carried over: %v", name, err))
			continue
		}
		res.Views = append(res.Views, name)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

// maxUnionTerms is the most SELECTs one view of a merge unites: SQLite
// refuses a compound SELECT of more than 500 terms (SQLITE_MAX_COMPOUND_SELECT,
// "too many terms in compound SELECT").
const maxUnionTerms = 400

// createUnionView defines view name as the UNION ALL of tables. Beyond
// maxUnionTerms tables it unites part views (name_part1_0001, ...) of at
// most maxUnionTerms tables each, in as many levels as needed: SQLite
// checks the limit per statement, and a view's statement is parsed on its
// own, so a merge has no rank limit.
func createUnionView(ctx context.Context, tx *sql.Tx, name string, tables []string) error {
	create := func(view string, tables []string) error {
		selects := make([]string, len(tables))
		for i, t := range tables {
			selects[i] = "SELECT * FROM " + quote(t)
		}
		_, err := tx.ExecContext(ctx, "CREATE VIEW "+quote(view)+" AS "+strings.Join(selects, " UNION ALL "))
		return err
	}
	for level := 1; len(tables) > maxUnionTerms; level++ {
		var parts []string
		for i := 0; i < len(tables); i += maxUnionTerms {
			part := fmt.Sprintf("%s_part%d_%04d", name, level, len(parts)+1)
			if err := create(part, tables[i:min(i+maxUnionTerms, len(tables))]); err != nil {
				return err
			}
			parts = append(parts, part)
		}
		tables = parts
	}
	return create(name, tables)
}

func copyInput(ctx context.Context, conn *sql.Conn, in string, images []Image, tables map[string]*mergedTable,
	order *[]string, views map[string]string, viewOrder *[]string, res *MergeResult) error {
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS src`, in); err != nil {
		return err
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), `DETACH DATABASE src`) }()

	type object struct{ typ, name, sql string }
	var objs []object
	rows, err := conn.QueryContext(ctx, `SELECT type, name, sql FROM src.sqlite_master
WHERE sql IS NOT NULL AND type IN ('table', 'view', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY rowid`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.typ, &o.name, &o.sql); err != nil {
			rows.Close()
			return err
		}
		objs = append(objs, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	owned := map[string]bool{}
	for _, o := range objs {
		if o.typ != "table" {
			continue
		}
		base, ok := imageBase(o.name, images)
		if !ok {
			continue
		}
		owned[o.name] = true
		if _, err := tx.ExecContext(ctx, o.sql); err != nil {
			return fmt.Errorf("create %s: %w", o.name, err)
		}
		n, err := tx.ExecContext(ctx, "INSERT INTO main."+quote(o.name)+" SELECT * FROM src."+quote(o.name))
		if err != nil {
			return fmt.Errorf("copy %s: %w", o.name, err)
		}
		cnt, _ := n.RowsAffected()
		res.Rows[base] += cnt
		cols, err := columnList(ctx, tx, o.name)
		if err != nil {
			return err
		}
		t := tables[base]
		if t == nil {
			t = &mergedTable{base: base, cols: cols}
			tables[base] = t
			*order = append(*order, base)
		} else if t.cols != cols {
			return fmt.Errorf("table %s has columns (%s), other inputs have (%s): "+
				"the databases come from different schema versions", o.name, cols, t.cols)
		}
		t.tables = append(t.tables, o.name)
	}
	for _, o := range objs {
		switch {
		case o.typ == "index":
			var tbl string
			_ = tx.QueryRowContext(ctx, `SELECT tbl_name FROM src.sqlite_master WHERE name = ?`, o.name).Scan(&tbl)
			if owned[tbl] {
				if _, err := tx.ExecContext(ctx, o.sql); err != nil {
					return fmt.Errorf("index %s: %w", o.name, err)
				}
			}
		case o.typ == "view":
			if _, isBase := tables[o.name]; isBase || strings.HasPrefix(o.name, "rocpd_") {
				continue
			}
			if _, dup := views[o.name]; !dup {
				views[o.name] = o.sql
				*viewOrder = append(*viewOrder, o.name)
			}
		}
	}
	return tx.Commit()
}

// imageBase returns the base name of a suffixed rocpd table of one of the
// images.
func imageBase(name string, images []Image) (string, bool) {
	if !strings.HasPrefix(name, "rocpd_") {
		return "", false
	}
	for _, im := range images {
		if im.Suffix != "" && strings.HasSuffix(name, im.Suffix) {
			return strings.TrimSuffix(name, im.Suffix), true
		}
	}
	return "", false
}

func columnList(ctx context.Context, tx *sql.Tx, table string) (string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?, 'main')`, table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return "", err
		}
		cols = append(cols, c)
	}
	return strings.Join(cols, ", "), rows.Err()
}

// SortedBases returns the base names of a merge result in name order.
func (r *MergeResult) SortedBases() []string {
	out := make([]string, 0, len(r.Rows))
	for b := range r.Rows {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}
