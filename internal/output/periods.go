package output

import (
	"bufio"
	"io"
	"path/filepath"
	"sort"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// CollectionPeriodsPath is rocprofv3's collection-period test log of an
// output prefix: <prefix>_collection_periods.log.
func CollectionPeriodsPath(prefix string) string { return prefix + "_collection_periods.log" }

// WriteCollectionPeriods writes rocprofv3's collection_periods.log for one
// output group: the --collection-period timer's steps the preload library
// noted (only with ROCPROF_COLLECTION_PERIOD_TESTING true), one per line,
// "--" before each period, then "delay", "start", "duration" and "stop",
// each as label:begin:end in ns, process after process. It reports whether
// there was anything to write (no file otherwise).
func WriteCollectionPeriods(prefix string, spools []string) (bool, error) {
	type line struct {
		id   uint64
		text string
	}
	var all [][]line
	for _, path := range spools {
		r, err := tracing.Open(path)
		if err != nil {
			return false, err
		}
		var lines []line
		for r.Next() {
			if r.Kind() == tracing.KindString {
				if s := r.String(); s.Table == tracing.TablePeriod {
					lines = append(lines, line{s.ID, string(s.Value)})
				}
			}
		}
		_ = r.Close()
		if len(lines) > 0 {
			sort.Slice(lines, func(i, j int) bool { return lines[i].id < lines[j].id })
			all = append(all, lines)
		}
	}
	if len(all) == 0 {
		return false, nil
	}
	path := CollectionPeriodsPath(prefix)
	if err := atomicfile.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	err := atomicfile.Write(path, atomicfile.Public, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for _, lines := range all {
			for _, l := range lines {
				bw.WriteString(l.text)
				bw.WriteByte('\n')
			}
		}
		return bw.Flush()
	})
	return true, err
}
