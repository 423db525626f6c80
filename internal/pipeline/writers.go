package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// The writers' settings a user may change through rocprof-go's own
// environment (docs/performance.md, "Writing the outputs"): read by the
// CLI, never handed to the app.
const (
	// EnvPerfettoPartBytes is the size past which a Perfetto trace goes on
	// in a new .pftrace part (bytes, or with a K, M or G suffix; default
	// 2G, under the 4 GB trace processor opens).
	EnvPerfettoPartBytes = "ROCPROF_GO_PERFETTO_PART_BYTES"
	// EnvSpillDir is where the writers' spill files go (internal/spill);
	// default: the run's output directory, on the output file system.
	EnvSpillDir = "ROCPROF_GO_SPILL_DIR"
)

// maxPartBytes: trace processor's sizes are 32-bit; a part ends one record
// past the size.
const maxPartBytes = 4<<30 - 64<<20

// writerSettings reads the writers' settings from the environment: the
// Perfetto part size (0: the writer's default) and the spill directory
// ("": the output directory's). A bad value is an error naming the
// variable and what it takes.
func writerSettings(lookup func(string) (string, bool)) (partBytes uint64, spillDir string, err error) {
	if v, ok := lookup(EnvPerfettoPartBytes); ok && v != "" {
		partBytes, err = parseSize(v)
		if err != nil || partBytes < 4096 || partBytes > maxPartBytes {
			return 0, "", fmt.Errorf("%s=%q is not a part size: give bytes from 4096 to %d (under the 4 GB trace processor opens), e.g. 1073741824 or 1G",
				EnvPerfettoPartBytes, v, uint64(maxPartBytes))
		}
	}
	if v, ok := lookup(EnvSpillDir); ok && v != "" {
		if !filepath.IsAbs(v) {
			return 0, "", fmt.Errorf("%s=%q is not an absolute path: name a directory of yours on a local disk, e.g. %s=$TMPDIR", EnvSpillDir, v, EnvSpillDir)
		}
		d, err := securedir.Open(v)
		if err != nil {
			return 0, "", fmt.Errorf("%s=%q: %v: name a directory of yours on a local disk", EnvSpillDir, v, err)
		}
		d.Close()
		spillDir = v
	}
	return partBytes, spillDir, nil
}

// parseSize reads bytes with an optional binary K, M or G suffix.
func parseSize(v string) (uint64, error) {
	mult := uint64(1)
	switch strings.ToUpper(v[len(v)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > (1<<63)/mult {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}

// spillRoot is where a pass's writers put their spill files: the variable's
// directory, else the fixed part of the output directory (the file system
// the outputs go to, usually a disk, where $TMPDIR may be a tmpfs in RAM),
// else, when that directory is not one securedir trusts (a directory other
// users may change), "": $TMPDIR.
func spillRoot(setting, outDir string) string {
	if setting != "" {
		return setting
	}
	if outDir == "" {
		return ""
	}
	d, err := securedir.Open(outDir)
	if err != nil {
		return ""
	}
	d.Close()
	return outDir
}

// envLookup is the CLI's own environment.
var envLookup = os.LookupEnv

// FormatBytes is one output format's files on disk (run.json's
// format_bytes).
type FormatBytes struct {
	Files          int     `json:"files"`
	Bytes          int64   `json:"bytes"`
	BytesPerRecord float64 `json:"bytes_per_record"`
}

// outputBytes is a file's size, or the size of a directory's files with
// its anchor and definitions beside it (OTF2's archive: NAME/, NAME.otf2,
// NAME.def); 0 when it is gone or is no file (stdout).
func outputBytes(path string) int64 {
	st, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	if st.Mode().IsRegular() {
		return st.Size()
	}
	if !st.IsDir() {
		return 0
	}
	n := outputBytes(path+".otf2") + outputBytes(path+".def")
	_ = filepath.WalkDir(path, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// formatBytes sums the files' bytes by format, per record of the run.
func formatBytes(files []ManifestFile, records map[string]int64) map[string]FormatBytes {
	var total int64
	for _, n := range records {
		total += n
	}
	var out map[string]FormatBytes
	for _, f := range files {
		if f.Bytes == 0 {
			continue
		}
		if out == nil {
			out = map[string]FormatBytes{}
		}
		b := out[f.Format]
		b.Files++
		b.Bytes += f.Bytes
		if total > 0 {
			b.BytesPerRecord = float64(b.Bytes) / float64(total)
		}
		out[f.Format] = b
	}
	return out
}

// bytesPerRecord is what each output format takes on disk per record, by
// kind: an API call (HIP, HSA, markers and the other host records are near
// it) and a kernel dispatch. Measured by BenchmarkOutputBytesPerRecord (1M
// records of each kind, times jittered; docs/performance.md "Disk use"):
// Parquet's figures hold for timestamps as regular as the benchmark's, and
// real traces compress less.
var bytesPerRecord = map[string][2]float64{
	"csv":     {75.5, 157.7},
	"json":    {168.6, 429.1},
	"rocpd":   {139.9, 165.6},
	"parquet": {4.1, 5.4},
	"pftrace": {150.0, 219.9},
	"otf2":    {37.0, 37.3},
}

// OutputEstimate says, for each format of a pass, the bytes a record takes
// on disk (an API call, a kernel dispatch), as --echo prints it: "csv 76 /
// 158", one format after another.
func OutputEstimate(formats []string) string {
	var parts []string
	for _, f := range formats {
		if b, ok := bytesPerRecord[f]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f / %.0f", f, b[0], b[1]))
		}
	}
	return strings.Join(parts, ", ")
}
