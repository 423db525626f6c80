// Package format is the one list of output formats: the names -f/--output-format
// accepts (and `convert -f`), in the order help lists them. The option table
// (internal/options) takes its choices from it and the writers' registry
// (internal/output, formats.go) has one writer for each; both are checked
// against it by tests. It is a leaf, below both, because the options and the
// outputs' model know nothing of each other.
package format
