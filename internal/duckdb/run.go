package duckdb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Name is the companion executable's file name.
const Name = "rocprof-go-duckdb"

// EnvVar names the companion's path when it is neither beside the CLI
// nor in PATH.
const EnvVar = "ROCPROF_GO_DUCKDB"

// ErrMissing is Find's error when there is no companion.
var ErrMissing = errors.New(Name + " not found")

// Find returns the companion's path: $ROCPROF_GO_DUCKDB, else
// rocprof-go-duckdb in the running executable's directory, else in PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvVar); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvVar, p, err)
		}
		return p, nil
	}
	var beside string
	if self, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(self), Name)
		if executable(beside) == nil {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(Name); err == nil {
		return p, nil
	}
	where := "beside rocprof-go"
	if beside != "" {
		where = "at " + beside
	}
	return "", fmt.Errorf("%w: this rocprof-go does not embed the DuckDB engine (one built by make build does) and none is beside it: copy build/%s (a static executable that runs on any x86-64 Linux) %s, put it in PATH, or set %s to its path (docs/mpi.md); the duckdb CLI runs the same query on the files (rocprof-go job --imbalance --print-query DIR): %w",
		ErrMissing, Name, where, EnvVar, fs.ErrNotExist)
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// Result is a query's rows (JSON values: json.Number, string, bool, nil,
// arrays and objects) and what the engine's process cost.
type Result struct {
	Rows      [][]any
	MaxRSSKiB int64 // the companion's peak resident set
}

// Query runs q in the companion bounded by o and returns its rows.
func Query(ctx context.Context, o Options, q string) (*Result, error) {
	path := o.Engine
	if path == "" {
		var err error
		if path, err = Find(); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, path, append(append(o.Args(), "-json", "--"), q)...)
	cmd.Dir = o.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := &Result{}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSSKiB = ru.Maxrss
		}
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("duckdb (%s): %s", path, msg)
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var row []any
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("duckdb (%s): a row that is no JSON array: %w", path, err)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, sc.Err()
}

// SQLString is s as an SQL string literal.
func SQLString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
