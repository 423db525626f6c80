package output

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

const v1GoldenDir = "../../testdata/output/v1"

func checkV1Golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(v1GoldenDir, name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll(v1GoldenDir, 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/output -run V1 -update")
	require.Equal(t, string(want), got, name)
}

// TestV1Golden: -o results.csv writes rocprof v1's files (WriteV1, after
// the last pass), whatever -f says; with v1's GEN_STATS (--stats or a trace
// option) results.csv takes v1's database-backed layout and the stats files
// are written, without it results.csv alone, plain (rocprof 5.2.3's
// rpl_run.sh). The pass's own writer (Write) then writes none of
// rocprofv3's files unless -f asks for csv: --stats means v1's stats.
func TestV1Golden(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	for _, tc := range []struct {
		name  string
		stats bool
	}{{"plain", false}, {"stats", true}} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			cfg := model.Config{Dir: out, PrefixTemplate: "results.csv", Stats: tc.stats, V1Stats: tc.stats,
				Formats: []model.Format{"rocpd"}}
			_, err := Write(cfg, spools)
			require.NoError(t, err)
			for name := range outputtest.ReadTree(t, out) {
				require.False(t, strings.HasSuffix(name, ".csv"), "no rocprofv3 CSV or stats file without -f csv: %s", name)
			}
			res, err := WriteV1([]V1Pass{{Config: cfg, SpoolDir: spools}})
			require.NoError(t, err)
			files := outputtest.ReadTree(t, out)
			var v1 []string
			for n := range files {
				if strings.HasSuffix(n, ".csv") { // -f rocpd's database is Write's
					v1 = append(v1, n)
				}
			}
			sort.Strings(v1)
			want := []string{"results.copy_stats.csv", "results.csv", "results.hip_stats.csv",
				"results.hsa_stats.csv", "results.stats.csv"}
			if !tc.stats {
				want = []string{"results.csv"}
			}
			require.Equal(t, want, v1)
			for _, n := range v1 {
				checkV1Golden(t, tc.name+"."+n, files[n])
			}
			require.Len(t, res.Files, len(want))
			for _, f := range res.Files {
				require.Equal(t, int64(len(files[filepath.Base(f.Path)])), f.Bytes, f.Path)
			}
		})
	}
}

// TestV1MergesPassesByIndex: two passes of one app, each recording its
// dispatches out of order and its own counters, give one results.csv: a row
// per dispatch in Index order, the counters of both passes side by side
// (in the order the passes' pmc: lines named them), the dispatch properties
// of the first pass; the stats count the first pass's calls and copies and
// each dispatch once.
func TestV1MergesPassesByIndex(t *testing.T) {
	pass := func(pid int32, order []uint64, counter string, id uint64, value float64) string {
		dir := t.TempDir()
		b := spooltest.New(tracing.ProcessInfo{PID: pid, PPID: 1, StartBoottimeNs: 5, Hostname: "n", Argv: []string{"./app"}})
		b.Add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: 2, Value: []byte("hipLaunchKernel")})
		b.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gfx90a"))
		b.Add(tracing.KernelSymbol{KernelID: 1, CodeObjectID: 1, VGPRCount: 8, SGPRCount: 16,
			Name: []byte("_Z5saxpyPfS_fi.kd")})
		for _, d := range order {
			b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 2, TID: uint32(pid),
				CorrelationID: d, Start: 100 * d, End: 100*d + 10})
			b.Add(tracing.KernelDispatch{AgentNode: 1, TID: uint32(pid), QueueID: 1, DispatchID: d,
				KernelID: 1, CorrelationID: d, Start: 1000 * d, End: 1000*d + 500 + uint64(pid),
				Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}})
			b.Add(tracing.CounterSample{DispatchID: d, CounterID: id, Value: value * float64(d),
				AgentNode: 1, Name: []byte(counter)})
			b.NewChunk() // records of another thread: the spool is not in dispatch order
		}
		b.Add(tracing.MemoryCopy{Direction: tracing.CopyHostToDevice, SrcAgentNode: 0, DstAgentNode: 1,
			Bytes: 64, CorrelationID: 9, Start: 50, End: 90})
		_, err := b.WriteFile(dir)
		require.NoError(t, err)
		return dir
	}
	out := t.TempDir()
	cfg := model.Config{Dir: out, PrefixTemplate: "results.csv", Stats: true, V1Stats: true}
	p1 := pass(10, []uint64{3, 1, 2}, "SQ_WAVES", 20, 1)
	p2 := pass(20, []uint64{2, 3, 1}, "GRBM_COUNT", 3, 100)
	cfg1, cfg2 := cfg, cfg
	cfg1.V1Counters, cfg2.V1Counters = []string{"SQ_WAVES"}, []string{"GRBM_COUNT"}
	_, err := WriteV1([]V1Pass{{Config: cfg1, SpoolDir: p1}, {Config: cfg2, SpoolDir: p2}})
	require.NoError(t, err)
	files := outputtest.ReadTree(t, out)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	require.Equal(t, []string{"results.copy_stats.csv", "results.csv", "results.hip_stats.csv", "results.stats.csv"}, names)
	lines := strings.Split(strings.TrimSpace(files["results.csv"]), "\n")
	require.Len(t, lines, 4)
	require.Contains(t, lines[0], `"vgpr","sgpr","fbar","sig","obj","SQ_WAVES","GRBM_COUNT","DispatchNs"`)
	for i, line := range lines[1:] {
		d := uint64(i + 1)
		cells := strings.Split(line, ",")
		require.Equal(t, strconv.FormatUint(d-1, 10), cells[0], "Index order")
		require.Equal(t, `"saxpy(float*, float*, float, int)"`, strings.Join(cells[1:5], ","))
		require.Equal(t, "10", cells[8], "pid of the first pass")
		n := len(cells)
		require.Equal(t, strconv.FormatUint(d, 10), cells[n-7], "SQ_WAVES from pass 1")
		require.Equal(t, strconv.FormatUint(100*d, 10), cells[n-6], "GRBM_COUNT from pass 2")
		require.Equal(t, "0", cells[6], "queue-id: v1 counts queues from 0")
		require.Equal(t, []string{"4", "24", "0"}, cells[14:17], "vgpr, sgpr, fbar as v1 computed them on gfx90a")
		require.Equal(t, strconv.FormatUint(1000*d+510, 10), cells[n-3], "end time of the first pass")
	}
	require.Contains(t, files["results.stats.csv"], `"saxpy(float*, float*, float, int)",3,`)
	require.Contains(t, files["results.hip_stats.csv"], `"hipLaunchKernel",3,30,10,100.0`)
	require.Contains(t, files["results.copy_stats.csv"], `"CopyHostToDevice",1,40,40,100.0`)
}

func TestV1NotWithoutCSVName(t *testing.T) {
	spools, out := t.TempDir(), t.TempDir()
	csvFixture(t, spools, 100)
	cfg := model.Config{Dir: out, PrefixTemplate: "results", Formats: []model.Format{"rocpd"}}
	res, err := Write(cfg, spools)
	require.NoError(t, err)
	for _, f := range res.Files {
		require.NotEqual(t, model.FormatCSV, f.Format, "no v1 file from Write")
	}
	res, err = WriteV1([]V1Pass{{Config: cfg, SpoolDir: spools}})
	require.NoError(t, err)
	require.Empty(t, res.Files)
	for name := range outputtest.ReadTree(t, out) {
		require.False(t, strings.HasSuffix(name, ".csv"), "no v1 file: %s", name)
	}
}

func TestV1MinimumOutputBytes(t *testing.T) {
	spools, out := t.TempDir(), t.TempDir()
	csvFixture(t, spools, 100)
	cfg := model.Config{Dir: out, PrefixTemplate: "results.csv", MinimumOutputBytes: 1 << 30,
		Formats: []model.Format{model.FormatCSV}}
	_, err := Write(cfg, spools)
	require.NoError(t, err)
	_, err = WriteV1([]V1Pass{{Config: cfg, SpoolDir: spools}})
	require.NoError(t, err)
	require.Empty(t, outputtest.ReadTree(t, out))
}

// TestCSVToStdout: -o stdout and -o stderr both send every CSV file, whole
// and one after the other, to standard output; no file is created.
func TestCSVToStdout(t *testing.T) {
	spools := t.TempDir()
	csvFixture(t, spools, 100)
	for _, name := range []string{"stdout", "stderr", "STDOUT"} {
		out := t.TempDir()
		var buf strings.Builder
		res, err := Write(model.Config{Dir: out, PrefixTemplate: name, Formats: []model.Format{model.FormatCSV},
			Stats: true, Stdout: &buf}, spools)
		require.NoError(t, err)
		require.Empty(t, outputtest.ReadTree(t, out), name)
		// Concatenated files: each header line starts a file, in the order
		// Write lists them, each file's rows contiguous.
		ref := t.TempDir()
		_, err = Write(model.Config{Dir: ref, PrefixTemplate: "f", Formats: []model.Format{model.FormatCSV}, Stats: true}, spools)
		require.NoError(t, err)
		files := outputtest.ReadTree(t, ref)
		var want strings.Builder
		for _, f := range res.Files {
			require.Equal(t, "stdout", f.Path)
			want.WriteString(files["f_"+f.Name+".csv"])
		}
		require.Equal(t, want.String(), buf.String(), name)
		require.Len(t, res.Files, len(files))
	}
}
