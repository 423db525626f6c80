package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// --echo says what a record will take on disk in each format asked for
// (issue 43: disk use is predictable), from the measured figures of
// docs/performance.md.
func TestEchoEstimatesOutputBytes(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "--hip-trace", "-f", "csv", "pftrace", "--echo", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "  output bytes per record (API call / kernel dispatch): csv 76 / 158, pftrace 150 / 220\n")
}

// A Perfetto trace past the part size (ROCPROF_GO_PERFETTO_PART_BYTES,
// forced small here) is written as parts that each open alone, listed in
// run.json with their records (which sum to the run's) and in the report,
// whose hint says the trace is in parts; run.json gives the bytes of each
// part and of the format. A bad size stops the run before the app starts.
func TestPerfettoPartsOfARun(t *testing.T) {
	app := sampleApp(t, "multistream")
	out := t.TempDir()
	r := runCLI(t, []string{builtLibs(t), pipeline.EnvPerfettoPartBytes + "=4K"}, "--virtual-gpu", "--kernel-trace", "--hip-trace",
		"-f", "pftrace", "-d", out, "-o", "run", "--", app, "2", "4")
	require.Equal(t, 0, r.code, r.stderr)
	man, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	var records, total int64
	var bytes int64
	n := 0
	for _, f := range man.Files {
		if f.Format != "pftrace" {
			continue
		}
		n++
		require.Equal(t, fmt.Sprintf("run_results.part-%03d.pftrace", n), f.Path)
		b, err := os.ReadFile(filepath.Join(out, f.Path))
		require.NoError(t, err)
		require.EqualValues(t, len(b), f.Bytes)
		outputtest.PerfettoEvents(t, b)
		records += f.Records
		bytes += f.Bytes
	}
	require.Greater(t, n, 2, r.stderr)
	for _, c := range man.DomainRecords {
		total += c
	}
	require.Equal(t, total, records)
	require.Equal(t, rocprof.FormatBytes{Files: n, Bytes: bytes, BytesPerRecord: float64(bytes) / float64(total)}, man.FormatBytes["pftrace"])
	require.Regexp(t, fmt.Sprintf(`(?m)^  pftrace run_results\.part-\*\.pftrace +%d files +%d records, e\.g\. `, n, total), r.stderr)
	require.Contains(t, r.stderr, fmt.Sprintf("(the trace is in %d parts, each a trace of its own)", n))
	require.NoFileExists(t, filepath.Join(out, "run_results.pftrace"))

	r = runCLI(t, []string{pipeline.EnvPerfettoPartBytes + "=5T"}, "--hip-trace", "-f", "pftrace", "-d", t.TempDir(), "--", "true")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, pipeline.EnvPerfettoPartBytes+`="5T" is not a part size`)
}
