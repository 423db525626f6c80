//go:build cgo

package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	mem := flag.Int("memory-limit-mib", 512, "DuckDB's memory limit in MiB (it spills beyond)")
	threads := flag.Int("threads", 0, "DuckDB's threads (0: its default, the cores)")
	tmp := flag.String("temp-dir", "", "where DuckDB spills (default: its own)")
	asJSON := flag.Bool("json", false, "print each row as a JSON array")
	flag.Parse()
	q := url.Values{}
	q.Set("memory_limit", fmt.Sprintf("%dMiB", *mem))
	if *threads > 0 {
		q.Set("threads", fmt.Sprint(*threads))
	}
	// Nothing is fetched from the network, nothing is looked up in ~.
	q.Set("autoinstall_known_extensions", "false")
	q.Set("autoload_known_extensions", "false")
	if *tmp != "" {
		q.Set("temp_directory", *tmp)
	}
	db, err := sql.Open("duckdb", "?"+q.Encode())
	if err != nil {
		fail(err)
	}
	defer db.Close()
	out := os.Stdout
	for _, query := range flag.Args() {
		if err := run(db, query, *asJSON, out); err != nil {
			fail(err)
		}
	}
}

func run(db *sql.DB, query string, asJSON bool, out *os.File) error {
	rows, err := db.Query(query)
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
	enc := json.NewEncoder(out)
	empty := true
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		empty = false
		if asJSON {
			row := make([]any, len(vals))
			for i, v := range vals {
				row[i] = jsonValue(v)
			}
			if err := enc.Encode(row); err != nil {
				return err
			}
			continue
		}
		fields := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				fields[i] = "NULL"
			} else {
				fields[i] = fmt.Sprint(v)
			}
		}
		fmt.Fprintln(out, strings.Join(fields, "\t"))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if empty && !asJSON {
		fmt.Fprintln(out) // line i answers query i when each returns one row
	}
	return nil
}

// jsonValue is a DuckDB value as JSON keeps it exactly: HUGEINT as a
// number, times as RFC 3339 text.
func jsonValue(v any) any {
	switch x := v.(type) {
	case *big.Int:
		return json.Number(x.String())
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return v
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rocprof-go-duckdb:", err)
	os.Exit(1)
}
