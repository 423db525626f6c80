package output

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	jsonout "github.com/rocprof-go/rocprof-go/internal/output/json"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/output/perfetto"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// counterOrderFixture is the spool of a counted run of multistream (one
// stream: vadd, scale, then HIP's D2D blit kernel) as the shim recorded it
// on a loaded machine: the queue's completion thread recorded the three
// dispatches in order, in its chunk, and the samples of the first two; the
// blit's samples were recorded by the app's thread (waiting for the D2H
// copy, it saw the counter read complete first), in its chunk, which comes
// earlier in the spool. The dispatch records are in completion order; the
// samples are not. With blitFirst the app's thread recorded the blit's
// dispatch as well, after its samples: then the dispatch records are out of
// order too, and the blit's samples come before its record.
func counterOrderFixture(t *testing.T, dir string, blitFirst bool) {
	b := spooltest.New(tracing.ProcessInfo{PID: 7, Hostname: "h", Argv: []string{"multistream"}})
	b.Add(outputtest.Agent(0, 0, 0, tracing.AgentCPU, "cpu"))
	b.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gfx942"))
	for id, name := range []string{"", "vadd.kd", "scale.kd", "__amd_rocclr_copyBuffer.kd"} {
		if id > 0 {
			b.Add(tracing.KernelSymbol{KernelID: uint64(id), Name: []byte(name)})
		}
	}
	disp := func(id uint64, start, end uint64) tracing.KernelDispatch {
		return tracing.KernelDispatch{AgentNode: 1, TID: 10, QueueID: 1, DispatchID: id, KernelID: id,
			CorrelationID: id, Start: start, End: end, Grid: [3]uint32{256, 1, 1}, Workgroup: [3]uint32{64, 1, 1}}
	}
	samples := func(id uint64) {
		for _, c := range []struct {
			id   uint64
			name string
		}{{5, "SQ_WAVES"}, {6, "GRBM_COUNT"}} {
			b.Add(tracing.CounterSample{DispatchID: id, CounterID: c.id, Value: float64(100*id + c.id), AgentNode: 1,
				Name: []byte(c.name)})
		}
	}
	samples(3) // the app's thread: its chunk first
	if blitFirst {
		b.Add(disp(3, 3100, 4000))
	}
	b.NewChunk()
	b.Add(disp(1, 1000, 2000)) // the completion thread
	samples(1)
	b.Add(disp(2, 2100, 3000))
	samples(2)
	if !blitFirst {
		b.Add(disp(3, 3100, 4000))
	}
	_, err := b.WriteFile(dir)
	require.NoError(t, err)
}

// TestCounterRecordsInDispatchCompletionOrder: counter records are listed
// in their dispatches' completion order, as rocprofv3 lists them (its
// counting serialises the dispatches and calls back as each completes), in
// the JSON (rocprofiler-compute numbers the dispatches by their place in
// callback_records.counter_collection) and the CSV alike, also when the
// dispatch records are in order in the spool and only the samples are not.
// Before, the samples kept spool order then: the blit kernel came first
// (test/rocprofcompute's json mode found it as dispatch 0 instead of vadd).
func TestCounterRecordsInDispatchCompletionOrder(t *testing.T) {
	for _, blitFirst := range []bool{false, true} {
		name := "dispatches in order"
		if blitFirst {
			name = "samples before their dispatch"
		}
		t.Run(name, func(t *testing.T) { counterRecordsInOrder(t, blitFirst) })
	}
}

func counterRecordsInOrder(t *testing.T, blitFirst bool) {
	spools, out := t.TempDir(), t.TempDir()
	counterOrderFixture(t, spools, blitFirst)
	_, err := Write(model.Config{Dir: out, PrefixTemplate: "o", Formats: []model.Format{model.FormatCSV}}, spools)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(out, "o_counter_collection.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	header := strings.Split(lines[0], ",")
	col := -1
	for i, h := range header {
		if strings.Trim(h, `"`) == "Dispatch_Id" {
			col = i
		}
	}
	require.GreaterOrEqual(t, col, 0, "no Dispatch_Id column: %s", lines[0])
	var csvIDs []string
	for _, l := range lines[1:] {
		csvIDs = append(csvIDs, strings.Trim(strings.Split(l, ",")[col], `"`))
	}
	require.Equal(t, []string{"1", "1", "2", "2", "3", "3"}, csvIDs, "counter_collection.csv")

	paths, err := tracing.List(spools)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, jsonout.Write(&buf, &model.Input{Spools: paths}))
	var doc outputtest.JSONDoc
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	var jsonIDs []uint64
	for _, c := range doc.Tool[0].CallbackRecords.CounterCollection {
		id := c.DispatchData.DispatchInfo.DispatchID
		jsonIDs = append(jsonIDs, id)
		require.Len(t, c.Records, 2, "dispatch %d", id)
		require.Equal(t, float64(100*id+5), c.Records[0].Value, "dispatch %d keeps its values", id)
	}
	require.Equal(t, []uint64{1, 2, 3}, jsonIDs, "callback_records.counter_collection")
}

// TestROCpdCountersKeepTheirDispatch: in the ROCpd database every counter
// sample refers to its dispatch's event, also when the sample was read
// before the dispatch's record (the blit's samples in the app thread's
// earlier chunk). Before, such samples were stored with no event (NULL),
// and rocprofiler-compute's rocpd mode lost that dispatch's counters (its
// "2.1 Active CUs" of vadd empty, once in CI).
func TestROCpdCountersKeepTheirDispatch(t *testing.T) {
	for _, blitFirst := range []bool{false, true} {
		spools, out := t.TempDir(), t.TempDir()
		counterOrderFixture(t, spools, blitFirst)
		_, err := Write(model.Config{Dir: out, PrefixTemplate: "o", Formats: []model.Format{FormatROCpd}}, spools)
		require.NoError(t, err)
		db, err := sql.Open("sqlite3", filepath.Join(out, "o_results.db"))
		require.NoError(t, err)
		defer db.Close()
		rows, err := db.Query(`SELECT k.dispatch_id, e.value FROM rocpd_pmc_event e
			LEFT JOIN rocpd_kernel_dispatch k ON k.event_id = e.event_id ORDER BY e.value`)
		require.NoError(t, err)
		var got [][2]float64
		for rows.Next() {
			var id sql.NullInt64
			var v float64
			require.NoError(t, rows.Scan(&id, &v))
			require.True(t, id.Valid, "blitFirst %v: the sample of value %v has no dispatch", blitFirst, v)
			got = append(got, [2]float64{float64(id.Int64), v})
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.Equal(t, [][2]float64{{1, 105}, {1, 106}, {2, 205}, {2, 206}, {3, 305}, {3, 306}}, got, "blitFirst %v", blitFirst)
	}
}

// TestPerfettoCountersKeepTheirDispatch: the Perfetto trace shows every
// dispatch's counter pulse (a value at its start, 0 at its end, per
// counter), also when the samples were read before the dispatch's record.
// Before, such samples were left out of the trace.
func TestPerfettoCountersKeepTheirDispatch(t *testing.T) {
	for _, blitFirst := range []bool{false, true} {
		spools := t.TempDir()
		counterOrderFixture(t, spools, blitFirst)
		paths, err := tracing.List(spools)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, perfetto.Write(&buf, &model.Input{Spools: paths}))
		s := outputtest.DecodePerfetto(t, buf.Bytes())
		require.Equal(t, uint64(3*2*2), s.Counters, "blitFirst %v: 3 dispatches, 2 counters, a start and an end value each", blitFirst)
	}
}
