package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// The writers' settings from rocprof-go's environment: the Perfetto part
// size (bytes or K/M/G, under trace processor's 4 GB) and the spill
// directory; a bad value names the variable and what it takes.
func TestWriterSettings(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	n, dir, err := writerSettings(env())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, dir)
	for v, want := range map[string]uint64{"1048576": 1 << 20, "1M": 1 << 20, "64k": 64 << 10, "2G": 2 << 30} {
		n, _, err := writerSettings(env(EnvPerfettoPartBytes, v))
		require.NoError(t, err, v)
		require.Equal(t, want, n, v)
	}
	for _, v := range []string{"x", "1T", "-5", "100", "4G", "18446744073709551615G"} {
		_, _, err := writerSettings(env(EnvPerfettoPartBytes, v))
		require.ErrorContains(t, err, EnvPerfettoPartBytes+`="`+v+`" is not a part size: give bytes from 4096`, v)
	}

	mine := t.TempDir()
	_, dir, err = writerSettings(env(EnvSpillDir, mine))
	require.NoError(t, err)
	require.Equal(t, mine, dir)
	_, _, err = writerSettings(env(EnvSpillDir, "relative/dir"))
	require.ErrorContains(t, err, EnvSpillDir+`="relative/dir" is not an absolute path`)
	_, _, err = writerSettings(env(EnvSpillDir, filepath.Join(mine, "missing")))
	require.ErrorContains(t, err, "name a directory of yours on a local disk")
}

// Spill files go to the output directory's file system by default (where
// $TMPDIR may be a tmpfs, that is RAM), to the variable's directory when it
// is set, and to $TMPDIR when the output directory is one other users may
// change (securedir refuses to make files there that no one else may see).
func TestSpillRootIsTheOutputDirectory(t *testing.T) {
	out := t.TempDir()
	require.Equal(t, out, spillRoot("", out))
	require.Equal(t, "/chosen", spillRoot("/chosen", out))
	require.Equal(t, "", spillRoot("", ""))
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777)) // every user may write, no sticky bit
	require.Equal(t, "", spillRoot("", open))
}

// Every output format has its measured bytes per record (a new format
// needs BenchmarkOutputBytesPerRecord's figures), and the estimate names
// the pass's formats in their order.
func TestEveryFormatHasAnEstimate(t *testing.T) {
	for _, f := range format.Names() {
		b, ok := bytesPerRecord[f]
		require.True(t, ok, "no bytes per record for -f %s: run BenchmarkOutputBytesPerRecord", f)
		require.Positive(t, b[0], f)
		require.Positive(t, b[1], f)
	}
	require.Equal(t, "csv 76 / 158, parquet 4 / 5", OutputEstimate([]string{"csv", "parquet"}))
}

// run.json gives each file's bytes (an OTF2 archive's: its directory, anchor
// and definitions) and each format's, in all and per record of the run.
func TestManifestCountsOutputBytes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, make([]byte, n), 0o644))
		return p
	}
	csv := write("a_kernel_trace.csv", 1000)
	write("a_results/traces/0.evt", 300)
	write("a_results.otf2", 20)
	write("a_results.def", 80)
	require.EqualValues(t, 1000, outputBytes(csv))
	require.EqualValues(t, 400, outputBytes(filepath.Join(dir, "a_results")))
	require.Zero(t, outputBytes(filepath.Join(dir, "missing")))
	files := []ManifestFile{{Format: "csv", Bytes: 1000}, {Format: "csv", Bytes: 600}, {Format: "otf2", Bytes: 400}, {Format: "json"}}
	got := formatBytes(files, map[string]int64{"KERNEL_DISPATCH": 10, "HIP_API": 30})
	require.Equal(t, map[string]FormatBytes{"csv": {Files: 2, Bytes: 1600, BytesPerRecord: 40}, "otf2": {Files: 1, Bytes: 400, BytesPerRecord: 10}}, got)
}
