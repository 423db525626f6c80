package output

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// Instance selections (--pmc 'TCC_HIT[0]' 'TCC_HIT[1]' 'TCC_HIT[5]') are
// recorded under the id of the counter they select from, each with its own
// name. Each is its own counter in JSON's counters list and records and in
// ROCpd's rocpd_info_pmc and rocpd_pmc_event, with its own value (issue
// 32.6: before, one TCC_HIT[0] = 288 in ROCpd and one counter id in JSON);
// is_derived, expression, block and description come from the run's
// definitions (Config.DescribeCounter), a selection described as the
// select() counter it is.
func TestCounterSelectionsAreOwnCounters(t *testing.T) {
	spools := t.TempDir()
	b := spooltest.New(outputtest.Info(400))
	b.Add(tracing.KernelDispatch{AgentNode: 1, TID: 400, QueueID: 1, DispatchID: 1, KernelID: 1, CorrelationID: 1,
		Start: 1000, End: 2000, Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}})
	const tccHit, sqWaves, gpuUtil = 329, 226, 71
	sel := map[string]float64{"TCC_HIT[0]": 10, "TCC_HIT[1]": 20, "TCC_HIT[5]": 40}
	for _, name := range []string{"TCC_HIT[0]", "TCC_HIT[1]", "TCC_HIT[5]"} {
		b.Add(tracing.CounterSample{DispatchID: 1, CounterID: tccHit, Value: sel[name], AgentNode: 1, Name: []byte(name),
			Dims: []tracing.CounterDim{{DimensionID: 7, Index: 0}}})
	}
	for se := 0; se < 2; se++ {
		b.Add(tracing.CounterSample{DispatchID: 1, CounterID: sqWaves, Value: 3, AgentNode: 1, Name: []byte("SQ_WAVES"),
			Dims: []tracing.CounterDim{{DimensionID: 3, Index: uint32(se)}}})
	}
	b.Add(tracing.CounterSample{DispatchID: 1, CounterID: gpuUtil, Value: 50, AgentNode: 1, Name: []byte("GPU_UTIL")})
	path, err := b.WriteFile(spools)
	require.NoError(t, err)

	defs := map[string]model.CounterMeta{
		"TCC_HIT":  {Description: "Number of cache hits.", Block: "TCC", DimensionIDs: []uint64{7}},
		"SQ_WAVES": {Description: "Waves.", Block: "SQ", DimensionIDs: []uint64{7, 3}},
		"GPU_UTIL": {Description: "Busy.", Derived: true, Expression: "100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)", DimensionIDs: []uint64{7}},
	}
	out := t.TempDir()
	_, err = Write(model.Config{Dir: out, PrefixTemplate: "sel", SpoolPaths: []string{path},
		Formats: []model.Format{FormatJSON, FormatROCpd, model.FormatCSV},
		DescribeCounter: func(_, name string) (model.CounterMeta, bool) {
			m, ok := defs[name]
			return m, ok
		}}, "")
	require.NoError(t, err)

	type counter struct {
		ID         struct{ Handle uint64 } `json:"id"`
		Name       string                  `json:"name"`
		IsDerived  int                     `json:"is_derived"`
		Expression string                  `json:"expression"`
		Block      string                  `json:"block"`
		Desc       string                  `json:"description"`
		Dims       []uint64                `json:"dimension_ids"`
	}
	var doc struct {
		Tool []struct {
			Counters  []counter `json:"counters"`
			Callbacks struct {
				Counters []struct {
					Records []struct {
						ID    struct{ Handle uint64 } `json:"counter_id"`
						Value float64                 `json:"value"`
					} `json:"records"`
				} `json:"counter_collection"`
			} `json:"callback_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	data, err := os.ReadFile(filepath.Join(out, "sel_results.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	byName := map[string]counter{}
	names := map[uint64]string{}
	for _, c := range doc.Tool[0].Counters {
		byName[c.Name] = c
		_, dup := names[c.ID.Handle]
		require.False(t, dup, "counter id %d given twice", c.ID.Handle)
		names[c.ID.Handle] = c.Name
	}
	require.Len(t, byName, 5)
	for name := range sel {
		c := byName[name]
		require.Equal(t, 1, c.IsDerived, name)
		require.Equal(t, "select(TCC_HIT,[DIMENSION_INSTANCE=["+name[len("TCC_HIT["):len(name)-1]+"]])", c.Expression, name)
		require.Equal(t, "", c.Block, name)
		require.Equal(t, "Number of cache hits.", c.Desc, name)
	}
	require.Equal(t, counter{ID: byName["SQ_WAVES"].ID, Name: "SQ_WAVES", Block: "SQ", Desc: "Waves.", Dims: []uint64{7, 3}}, byName["SQ_WAVES"])
	require.Equal(t, 1, byName["GPU_UTIL"].IsDerived)
	require.Equal(t, defs["GPU_UTIL"].Expression, byName["GPU_UTIL"].Expression)
	sums := map[string]float64{}
	for _, r := range doc.Tool[0].Callbacks.Counters[0].Records {
		name, ok := names[r.ID.Handle]
		require.True(t, ok, "record of counter id %d the counters list lacks", r.ID.Handle)
		sums[name] += r.Value
	}
	require.Equal(t, map[string]float64{"TCC_HIT[0]": 10, "TCC_HIT[1]": 20, "TCC_HIT[5]": 40, "SQ_WAVES": 6, "GPU_UTIL": 50}, sums)

	db, err := sql.Open("sqlite3", filepath.Join(out, "sel_results.db"))
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT i.id, i.name, i.is_derived, i.expression, i.block, i.description, SUM(e.value)
		FROM rocpd_info_pmc i JOIN rocpd_pmc_event e ON e.pmc_id = i.id GROUP BY i.id ORDER BY i.name`)
	require.NoError(t, err)
	defer rows.Close()
	got := map[string]float64{}
	for rows.Next() {
		var id uint64
		var name, expr, block, desc string
		var derived int
		var v float64
		require.NoError(t, rows.Scan(&id, &name, &derived, &expr, &block, &desc, &v))
		require.Equal(t, names[id], name, "ROCpd and JSON give counter %d different names", id)
		require.Equal(t, byName[name].Expression, expr)
		require.Equal(t, byName[name].IsDerived, derived)
		require.Equal(t, byName[name].Block, block)
		require.Equal(t, byName[name].Desc, desc)
		got[name] = v
	}
	require.NoError(t, rows.Err())
	require.Equal(t, sums, got)
	var view float64
	require.NoError(t, db.QueryRow(`SELECT value FROM counters_collection WHERE counter_name = 'TCC_HIT[5]'`).Scan(&view))
	require.Equal(t, 40.0, view)

	// CSV, which always named them apart, keeps its rows and order.
	csv, err := os.ReadFile(filepath.Join(out, "sel_counter_collection.csv"))
	require.NoError(t, err)
	require.Regexp(t, `(?s)"GPU_UTIL",50.*"SQ_WAVES",6.*"TCC_HIT\[0\]",10.*"TCC_HIT\[1\]",20.*"TCC_HIT\[5\]",40`, string(csv))
}
