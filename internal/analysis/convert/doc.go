// Package convert turns ROCpd databases back into rocprof-go's other output
// formats without re-running the app. It reads a database back into the
// record stream a run produces — one spool per process, as the preload
// library writes them — and hands that to the writers in internal/output,
// so a converted CSV, JSON, Perfetto, OTF2 or Parquet file is what the run
// itself would have written from the same records. The intermediate spools
// live in a private .rocprof-go-tmp-convert-* directory in the output
// directory; the outputs go through internal/atomicfile like a run's.
package convert
