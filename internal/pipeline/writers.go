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
