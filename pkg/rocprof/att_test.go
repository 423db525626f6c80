package rocprof_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// fakeDecoderDir builds internal/att's stand-in decoder as
// librocprof-trace-decoder.so in a new directory.
func fakeDecoderDir(t *testing.T, cflags ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "internal", "att", "testdata", "fake_decoder.c")
	dir := t.TempDir()
	args := append([]string{"-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, "librocprof-trace-decoder.so")}, cflags...)
	b, err := exec.Command("cc", append(args, src)...).CombinedOutput()
	require.NoError(t, err, string(b))
	return dir
}

// --att with a decoder: after the app, each traced dispatch is decoded into
// ui_output_agent_<node>_dispatch_<id>/ plus stats_*.csv next to the raw
// files, which are kept. The stand-in decoder reports waves starting at the
// dispatch's kernel object: the outputs name vadd's kernel descriptor.
func TestThreadTraceDecodedAfterTheRun(t *testing.T) {
	libEnv(t)
	t.Setenv("FAKE_DECODER_PERFEVENTS", "1") // read by the decoder, which runs in this process
	out := t.TempDir()
	lib := fakeDecoderDir(t)
	// An earlier run's raw file in the same directory is not decoded again.
	stale := filepath.Join(out, "1_agent_1_shader_engine_0_99.att")
	require.NoError(t, os.WriteFile(stale, []byte("old"), 0o644))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--att", "--att-library-path", lib, "--kernel-include-regex", "vadd",
			"--att-perfcounters", "SQ_WAVES SQ_BUSY_CYCLES:3", "--att-perfcounter-ctrl", "4", "-d", out},
	}, []string{filepath.Join(buildDir(), "testdata", "multistream"), "1", "2"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	raws, err := filepath.Glob(filepath.Join(out, "*_agent_1_shader_engine_0_*.att"))
	require.NoError(t, err)
	require.Len(t, raws, 3, "vadd runs twice, plus the stale file")
	uis, err := filepath.Glob(filepath.Join(out, "ui_output_agent_1_dispatch_*"))
	require.NoError(t, err)
	require.Len(t, uis, 2)
	// run.json lists the decoded files with their row counts.
	listed := 0
	for _, f := range res.Manifest.Files {
		if f.Domain == "thread_trace" {
			listed++
			require.FileExists(t, filepath.Join(out, f.Path))
			require.EqualValues(t, 5, f.Records, f.Path)
		}
	}
	require.Equal(t, 4, listed, "a stats CSV and a code.json per dispatch")
	for _, ui := range uis {
		require.FileExists(t, filepath.Join(filepath.Dir(ui), "stats_"+filepath.Base(ui)+".csv"))
		var code struct {
			Code [][]any `json:"code"`
		}
		data, err := os.ReadFile(filepath.Join(ui, "code.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &code))
		require.Len(t, code.Code, 5, "the descriptor's name line and 4 instructions")
		require.Equal(t, "; _Z4vaddPKfS0_Pfi.kd", code.Code[0][0])
		require.Equal(t, "", code.Code[1][3], "no source reference without debug information")
		require.Regexp(t, `^\.long 0x[0-9a-f]{8}$`, code.Code[1][0], "a descriptor is data: its raw words")
		require.EqualValues(t, 2, code.Code[1][6], "two waves on SE 0 ran it")

		var occ map[string]any
		data, err = os.ReadFile(filepath.Join(ui, "occupancy.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &occ))
		require.Equal(t, "_Z4vaddPKfS0_Pfi.kd", occ["dispatches"].(map[string]any)["1"])
		require.Len(t, occ["0"], 8, "4 waves started and ended on SE 0")

		var names struct {
			Counters []string `json:"counter_names"`
			GFXIP    int      `json:"gfxip"`
		}
		data, err = os.ReadFile(filepath.Join(ui, "filenames.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &names))
		require.Equal(t, []string{"SQ_WAVES", "SQ_BUSY_CYCLES:3"}, names.Counters)
		require.Equal(t, 9, names.GFXIP, "the virtual GPU is a gfx90a")
		require.FileExists(t, filepath.Join(ui, "se0_perfcounter.json"))
		require.FileExists(t, filepath.Join(ui, "se0_sm0_sl0_wv0.json"))
		require.FileExists(t, filepath.Join(ui, "se0_sm1_sl0_wv0.json"))

		f, err := os.Open(filepath.Join(filepath.Dir(ui), "stats_"+filepath.Base(ui)+".csv"))
		require.NoError(t, err)
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err)
		require.Equal(t, "CodeObj", rows[0][0])
		require.Len(t, rows, 6)
	}
}

// rocprofv3's expected failures: a GPU index that does not exist and a
// library path without the decoder stop before the app runs.
func TestThreadTraceBadOptions(t *testing.T) {
	libEnv(t)
	app := []string{filepath.Join(buildDir(), "testdata", "multistream"), "1", "1"}
	_, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--att", "--att-gpu-index", "9999", "-d", t.TempDir()}}, app)
	var ue *options.UsageError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, err.Error(), "GPU 9999 does not exist")
	_, err = rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--att", "--att-library-path", t.TempDir(), "-d", t.TempDir()}}, app)
	require.ErrorAs(t, err, &ue)
	require.Contains(t, err.Error(), "librocprof-trace-decoder.so")
}

// A decoder that crashes takes the CLI down after run.json and the raw
// traces are written: the run's record and data survive it.
func TestThreadTraceDecoderCrashKeepsTheRun(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	lib := fakeDecoderDir(t, "-DFAKE_DECODER_CRASH")
	cmd := exec.Command(filepath.Join(buildDir(), "rocprof-go"), "--virtual-gpu", "--att", "--att-library-path", lib,
		"--kernel-include-regex", "vadd", "-d", out, "--", filepath.Join(buildDir(), "testdata", "multistream"), "1", "1")
	b, err := cmd.CombinedOutput()
	require.Error(t, err, "the decoder aborts the CLI: %s", b)
	m, err := rocprof.LoadManifest(out)
	require.NoError(t, err, string(b))
	require.Equal(t, 0, m.ExitStatus, "the app's own status is recorded")
	raws, err := filepath.Glob(filepath.Join(out, "*.att"))
	require.NoError(t, err)
	require.Len(t, raws, 1, "the raw trace is kept for a later decode")
}

// The app writes no output file itself: the shim leaves the raw traces and
// code objects beside the spools, and the run places them, with the output
// directory's placeholders expanded per process (a literal "%argt%-trace/"
// directory held them when the app wrote them), and lists them in run.json.
func TestThreadTraceFilesArePlacedByTheRun(t *testing.T) {
	libEnv(t)
	top := t.TempDir()
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--att", "--kernel-include-regex", "vadd", "-d", filepath.Join(top, "%argt%-trace")},
	}, []string{filepath.Join(buildDir(), "testdata", "multistream"), "1", "2"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	raws, err := filepath.Glob(filepath.Join(top, "multistream_1_2-trace", "*_agent_1_shader_engine_0_*.att"))
	require.NoError(t, err)
	require.Len(t, raws, 2, "vadd runs twice")
	require.NoDirExists(t, filepath.Join(top, "%argt%-trace"))
	cos, _ := filepath.Glob(filepath.Join(top, "multistream_1_2-trace", "*_code_object_id_*.out"))
	require.NotEmpty(t, cos)
	listed := 0
	for _, f := range res.Manifest.Files {
		if f.Domain == "thread_trace_raw" {
			listed++
		}
	}
	require.Equal(t, len(raws)+len(cos)+1, listed, "the raw traces, the code objects and their index")
}

// Without AMD's decoder the run (not the app) says where the raw traces are.
func TestThreadTraceWithoutDecoderSaysWhereTheFilesAre(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	var progress strings.Builder
	res, err := rocprof.Run(context.Background(), rocprof.Options{Progress: &progress, Environ: append(os.Environ(), "LD_LIBRARY_PATH="),
		Args: []string{"--virtual-gpu", "--att", "--kernel-include-regex", "vadd", "-d", out},
	}, []string{filepath.Join(buildDir(), "testdata", "multistream"), "1", "1"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	require.Contains(t, progress.String(), "rocprof-go: thread trace: librocprof-trace-decoder.so was not found")
	require.Contains(t, progress.String(), "the 1 raw .att files and their code objects are in "+out)
}
