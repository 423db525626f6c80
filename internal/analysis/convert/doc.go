// Package convert turns ROCpd databases back into rocprofv3's other output
// files without re-running the app. CSV files are written here, column for
// column as rocprofv3 writes them during a run (output-formats.md §3–4),
// streaming one database table at a time.
package convert
