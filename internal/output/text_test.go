package output

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// Text the app chose with bytes that are not UTF-8: every format holds it
// repaired the same way (each invalid run becomes U+FFFD), and each
// format's own reader accepts the file (issue 31).
const (
	badMessage  = "fwd\xff\xfe pass \xc3" // a cut two-byte sequence at the end
	goodMessage = "fwd\uFFFD pass \uFFFD"
	badKernel   = "_Z6k\xe9rnelPf.kd" // Latin-1 é
	goodKernel  = "k\uFFFDrnel(float*)"
	badCounter  = "SQ_\x80WAVES"
	badHost     = "node\xff1"
)

func writeBadTextSpool(t *testing.T, dir string) string {
	info := outputtest.Info(400)
	info.Hostname = badHost
	info.Argv = []string{"./app", "--tag=\xff"}
	b := spooltest.New(info)
	add := func(r encoding.BinaryAppender) { b.Add(r) }
	outputtest.Emit(400, 8, add)
	add(tracing.String{Table: tracing.TableCounter, ID: 3, Value: []byte(badCounter)})
	add(tracing.CodeObject{CodeObjectID: 2, Operation: tracing.CodeObjectLoad, AgentNode: 1,
		LoadBase: 0x7f0000100000, LoadSize: 4096, URI: []byte("file:///app\xff#offset=0&size=4096")})
	add(tracing.KernelSymbol{KernelID: 9, CodeObjectID: 2, KernelObject: 0x9000, KernargSize: 8, Name: []byte(badKernel)})
	t0 := uint64(400_000_000)
	add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: 400, CorrelationID: 901, Start: t0, End: t0 + 500})
	add(tracing.KernelDispatch{AgentNode: 1, TID: 400, QueueID: 1, DispatchID: 99, KernelID: 9, CorrelationID: 901,
		Start: t0 + 1000, End: t0 + 2000, Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}})
	add(tracing.CounterSample{DispatchID: 99, CounterID: 3, Value: 7, AgentNode: 1})
	add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange, TID: 400,
		CorrelationID: 900, RangeID: 902, Start: t0 - 100, End: t0 + 3000, Message: []byte(badMessage)})
	add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerMark, TID: 400,
		CorrelationID: 903, Start: t0 + 3100, End: t0 + 3100, Message: []byte(badMessage)})
	p, err := b.WriteFile(dir)
	require.NoError(t, err)
	return p
}

func TestInvalidUTF8IsRepairedInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	spools := filepath.Join(dir, "spools")
	require.NoError(t, os.Mkdir(spools, 0o755))
	writeBadTextSpool(t, spools)
	out := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	_, err := Write(model.Config{Dir: out, PrefixTemplate: "run", Stats: true, Summary: true, SummaryPerDomain: true,
		Stdout: &stdout, Formats: []model.Format{model.FormatCSV, FormatJSON, FormatPerfetto, FormatOTF2, FormatROCpd, FormatParquet}}, spools)
	require.NoError(t, err)
	prefix := filepath.Join(out, "run")

	// Every text file is valid UTF-8 and holds the repaired text.
	var all strings.Builder
	require.NoError(t, filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !(strings.HasSuffix(p, ".csv") || strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".txt")) {
			return err
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.True(t, utf8.Valid(b), "%s is not UTF-8", p)
		all.Write(b)
		return nil
	}))
	for _, s := range []string{goodMessage, goodKernel, "SQ_\uFFFDWAVES"} {
		require.Contains(t, all.String(), s)
	}
	marker, err := os.ReadFile(prefix + "_marker_api_trace.csv")
	require.NoError(t, err)
	require.Contains(t, string(marker), `"`+goodMessage+`"`)
	require.True(t, utf8.Valid(stdout.Bytes()))
	require.Contains(t, stdout.String(), goodMessage)

	// JSON: a strict decoder (encoding/json would silently repair; the file
	// itself must be valid).
	js, err := os.ReadFile(prefix + "_results.json")
	require.NoError(t, err)
	require.True(t, utf8.Valid(js))
	var doc any
	require.NoError(t, json.Unmarshal(js, &doc))
	require.Contains(t, string(js), goodMessage)
	require.Contains(t, string(js), "file:///app\uFFFD#offset")

	// ROCpd: Python's sqlite3 decodes every TEXT value as UTF-8 and fails
	// on the first that is not.
	db := prefix + "_results.db"
	script := `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
seen = set()
for v in sys.argv[2:]:
    for row in c.execute("SELECT * FROM " + v):
        for x in row:
            if isinstance(x, str):
                seen.add(x)
print("\n".join(sorted(seen)))
`
	cmd := exec.Command("python3", append([]string{"-c", script, db}, outputtest.ROCpdViews...)...)
	pyOut, err := cmd.CombinedOutput()
	require.NoError(t, err, "python3 sqlite3: %s", pyOut)
	require.Contains(t, string(pyOut), goodMessage)
	require.Contains(t, string(pyOut), "node\uFFFD1")

	// Parquet: DuckDB reads every column of every file.
	files := outputtest.ParquetFiles(t, prefix)
	var queries []string
	var order []model.Domain
	for d, f := range files {
		order = append(order, d)
		queries = append(queries, fmt.Sprintf(`SELECT count(*), bool_and(t::VARCHAR IS NOT NULL) FROM read_parquet(%s) t`, outputtest.SQLStr(f)))
	}
	for i, line := range outputtest.DuckDB(t, queries...) {
		require.True(t, strings.HasSuffix(line, "\ttrue"), "%s: %s", files[order[i]], line)
	}
	msgs := outputtest.DuckDB(t, fmt.Sprintf(`SELECT string_agg(DISTINCT t::VARCHAR, '|') FROM read_parquet(%s) t`,
		outputtest.SQLStr(files[model.DomMarker])))
	require.Contains(t, msgs[0], goodMessage)

	// Perfetto: slice names as a reader replays them.
	trace, err := os.ReadFile(prefix + "_results.pftrace")
	require.NoError(t, err)
	names := outputtest.ImportSlices(t, trace)
	found := false
	for n := range names {
		require.True(t, utf8.ValidString(n), "%q", n)
		found = found || strings.HasPrefix(n, goodMessage)
	}
	require.True(t, found, "no slice named %q", goodMessage)

	// OTF2: the library's own printer shows the definitions.
	defs, err := exec.Command("otf2-print", "-G", prefix+"_results.otf2").CombinedOutput()
	require.NoError(t, err, "%s", defs)
	require.True(t, utf8.Valid(defs))
	require.Contains(t, string(defs), goodMessage)
}

func TestValidTextIsNotCopied(t *testing.T) {
	s := "kernel(float*) ✓"
	require.Equal(t, s, model.ValidString(s))
	b := []byte(s)
	require.Same(t, &b[0], &model.ValidBytes(b)[0])
	require.Equal(t, "a\uFFFDb\uFFFD", model.ValidString("a\xff\xfeb\xc3"))
	require.Zero(t, testing.AllocsPerRun(100, func() { model.ValidBytes(b) }))
}

// The recorder counts the records whose string it cut to fit (names and
// messages over ~64 KiB) in the spool's header; Write reports the count per
// process, which run.json's truncated_names and the run's note show
// (issue 31: the count was never reported).
func TestTruncatedNamesAreReported(t *testing.T) {
	dir := t.TempDir()
	info := outputtest.Info(600)
	info.TruncatedRecords = 3
	b := spooltest.New(info)
	outputtest.Emit(600, 4, func(r encoding.BinaryAppender) { b.Add(r) })
	_, err := b.WriteFile(dir)
	require.NoError(t, err)
	res, err := Write(model.Config{Dir: t.TempDir(), PrefixTemplate: "run", Formats: []model.Format{model.FormatCSV}}, dir)
	require.NoError(t, err)
	require.Len(t, res.Processes, 1)
	require.Equal(t, uint64(3), res.Processes[0].Truncated)
}
