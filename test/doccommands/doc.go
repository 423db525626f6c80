// Package doccommands runs the commands the documentation shows: every
// fenced sh block of README.md and docs/*.md, every SQL block (through
// DuckDB), and the examples in the CLI's --help texts, as a new user would
// type them, on the virtual GPU (a config file sets virtual_gpu, as a
// CPU-only CI runner would). The files they read (./app, input.txt,
// results.db, runs to compare, ...) are made first; the few lines that
// cannot run here are listed in the test with the reason, and a new block
// that is neither runnable nor listed fails the test.
package doccommands
