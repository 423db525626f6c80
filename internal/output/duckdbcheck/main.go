// Command duckdbcheck runs SQL queries in an in-memory DuckDB and prints,
// for each query given as an argument, its result rows: one line per row,
// columns separated by tabs, NULL as "NULL". An empty result prints an
// empty line, so output line i answers query i when each returns one row.
//
// The output package's tests run it to read the Parquet writer's files
// with an engine that shares no code with Arrow's writer (DuckDB's own
// Parquet reader). It is its own Go module so that DuckDB, a cgo library
// with a large prebuilt static archive, stays out of rocprof-go's go.mod.
package main

import (
	"database/sql"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		fail(err)
	}
	defer db.Close()
	for _, q := range os.Args[1:] {
		if err := run(db, q); err != nil {
			fail(fmt.Errorf("%s: %w", q, err))
		}
	}
}

func run(db *sql.DB, q string) error {
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var lines []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fields := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				fields[i] = "NULL"
			} else {
				fields[i] = fmt.Sprint(v)
			}
		}
		lines = append(lines, strings.Join(fields, "\t"))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(lines) == 0 {
		lines = append(lines, "")
	}
	fmt.Println(strings.Join(lines, "\n"))
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "duckdbcheck:", err)
	os.Exit(1)
}
