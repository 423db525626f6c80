package counters

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

func loadDB(t testing.TB, agent string, opts ...Option) *DB {
	t.Helper()
	dev, err := aql.ParseAgent(agent)
	require.NoError(t, err)
	db, err := Load(dev, opts...)
	require.NoError(t, err)
	return db
}

// Every derived counter of every architecture key that maps onto a block
// table parses and resolves (its references and dimensions are consistent).
func TestEveryDerivedCounterResolvesOnEveryArch(t *testing.T) {
	keys, err := ArchKeys()
	require.NoError(t, err)
	mapped := 0
	for _, k := range keys {
		dev, err := aql.ParseAgent(k)
		if err != nil {
			require.Equal(t, "gfx9", k, "only the generic gfx9 key maps onto no table")
			continue
		}
		mapped++
		db, err := Load(dev)
		require.NoError(t, err, k)
		derived := 0
		for _, c := range db.Counters {
			_, err := db.Dimensions(c)
			require.NoError(t, err, "%s on %s", c.Name, k)
			if c.Kind == Derived {
				derived++
				_, err := db.Leaves(c)
				require.NoError(t, err, "%s on %s", c.Name, k)
			}
		}
		require.Positive(t, derived, k)
	}
	require.Equal(t, 20, mapped)
}

func TestDimensions(t *testing.T) {
	tests := []struct {
		agent, counter, want string
	}{
		{"gfx90a", "SQ_WAVES", "DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:7]"},
		{"gfx90a", "TA_TA_BUSY", "DIMENSION_INSTANCE[0:13] DIMENSION_SHADER_ENGINE[0:7]"},
		{"gfx90a", "TCC_HIT", "DIMENSION_INSTANCE[0:31]"},
		{"gfx90a", "TCC_HIT_sum", "DIMENSION_INSTANCE[0:0]"},
		{"gfx90a", "GPU_UTIL", "DIMENSION_INSTANCE[0:0]"},
		{"gfx90a", "simd_count", "DIMENSION_INSTANCE[0:0]"},
		{"gfx942", "SQ_WAVES", "DIMENSION_XCC[0:7] DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:3]"},
		{"gfx1100", "SQ_WAVES", "DIMENSION_WGP[0:3] DIMENSION_SHADER_ENGINE[0:5] DIMENSION_SHADER_ARRAY[0:1]"},
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+tt.counter, func(t *testing.T) {
			db := loadDB(t, tt.agent)
			c, ok := db.Lookup(tt.counter)
			require.True(t, ok)
			dims, err := db.Dimensions(c)
			require.NoError(t, err)
			var parts []string
			for _, d := range dims {
				parts = append(parts, d.String())
			}
			require.Equal(t, tt.want, strings.Join(parts, " "))
		})
	}
}

// records builds per-instance records along one dimension.
func records(d Dimension, vals ...float64) []Record {
	out := make([]Record, len(vals))
	for i, v := range vals {
		out[i] = Record{Pos: Position(0).With(d, i), Value: v}
	}
	return out
}

func TestEvaluate(t *testing.T) {
	db := loadDB(t, "gfx90a:xcc=1,se=8,cu=104,sa=1")
	in := Inputs{
		"GRBM_GUI_ACTIVE":                      {{Value: 750}},
		"GRBM_COUNT":                           {{Value: 1000}},
		"TCC_HIT":                              records(DimInstance, 1, 2, 3, 4, 5, 6, 7, 8),
		"TCC_MISS":                             records(DimInstance, 0, 0, 1, 1, 2, 2, 3, 3),
		"TA_TA_BUSY":                           records(DimInstance, 10, 20, 30, 0),
		"SQ_WAVES":                             records(DimShaderEngine, 4, 4, 4, 4, 4, 4, 4, 4),
		"SQ_LEVEL_WAVES":                       records(DimShaderEngine, 1, 1, 1, 1, 1, 1, 1, 1),
		InputKey("SQ_LEVEL_WAVES", "HIGH_RES"): records(DimShaderEngine, 100, 100, 100, 100, 100, 100, 100, 100),
	}
	tests := []struct {
		name string
		expr string
		want []float64
	}{
		// 100*750/1000
		{"GPU_UTIL", "", []float64{75}},
		// sum(HIT)=36, sum(MISS)=12: 100*36/48
		{"L2CacheHit", "", []float64{75}},
		{"TA_BUSY_avr", "", []float64{15}},
		{"TA_BUSY_max", "", []float64{30}},
		{"TA_BUSY_min", "", []float64{0}},
		// simd_count/simd_per_cu = 416/4
		{"CU_NUM", "", []float64{104}},
		{"expr", "reduce(SQ_WAVES,sum)", []float64{32}},
		// quirk: scalar on the left of '-' and '/' is applied reversed
		{"expr", "10-TA_TA_BUSY", []float64{0, 10, 20, -10}},
		{"expr", "60/TA_TA_BUSY", []float64{10.0 / 60, 20.0 / 60, 30.0 / 60, 0}},
		{"expr", "TA_TA_BUSY-10", []float64{0, 10, 20, -10}},
		// division by zero gives 0
		{"expr", "GRBM_COUNT/0", []float64{0}},
		{"expr", "TCC_HIT/TCC_MISS", []float64{0, 0, 3, 4, 2.5, 3, 7.0 / 3, 8.0 / 3}},
		// numbers are atoi'd: 0.5 is 0
		{"expr", "GRBM_COUNT*0.5", []float64{0}},
		{"expr", "GRBM_COUNT*1e3", []float64{1000}},
		{"expr", "reduce(accumulate(SQ_LEVEL_WAVES,HIGH_RES),sum)/reduce(SQ_LEVEL_WAVES,sum)", []float64{100}},
		{"expr", "select(TCC_HIT,[DIMENSION_INSTANCE=[1,3]])", []float64{2, 4}},
		{"expr", "reduce(SQ_WAVES,max,[SHADER_ENGINE])", []float64{4}},
		{"expr", "reduce(TCC_HIT,sum,[DIMENSION_SHADER_ENGINE])", []float64{1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.expr, func(t *testing.T) {
			c, ok := db.Lookup(tt.name)
			if tt.expr != "" {
				n, err := Parse(tt.expr)
				require.NoError(t, err)
				c, ok = &Counter{Name: "expr", Kind: Derived, Expression: tt.expr, Expr: n}, true
			}
			require.True(t, ok)
			got, err := db.Evaluate(c, in)
			require.NoError(t, err)
			vals := make([]float64, len(got))
			for i, r := range got {
				vals[i] = r.Value
			}
			require.InDeltaSlice(t, tt.want, vals, 1e-9)
		})
	}
}

func TestEvaluateErrors(t *testing.T) {
	db := loadDB(t, "gfx90a")
	in := Inputs{"TCC_HIT": records(DimInstance, 1, 2, 3), "TA_TA_BUSY": records(DimInstance, 1, 2)}
	tests := []struct{ expr, msg string }{
		{"TCC_HIT+TA_TA_BUSY", "Mismatched Sizes"},
		{"reduce(TCC_HIT,avg)", "Invalid Second argument to reduce()"},
		{"select(TCC_HIT,[DIMENSION_INSTANCE=[0:1]])", "Range based selection not supported"},
		{"SQ_WAVES", "no collected data for SQ_WAVES"},
		{"SQ_WAVEZ", `did you mean "SQ_WAVES"`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			n, err := Parse(tt.expr)
			require.NoError(t, err)
			_, err = db.Evaluate(&Counter{Name: "expr", Kind: Derived, Expr: n}, in)
			require.ErrorContains(t, err, tt.msg)
		})
	}
}

func TestParseRequest(t *testing.T) {
	tests := []struct {
		in   string
		want Request
		err  string
	}{
		{in: "SQ_WAVES", want: Request{Raw: "SQ_WAVES", Name: "SQ_WAVES", Instance: -1, Device: -1}},
		{in: "TCC_HIT[3]", want: Request{Raw: "TCC_HIT[3]", Name: "TCC_HIT", Instance: 3, Device: -1}},
		{in: "GRBM_COUNT:device=1", want: Request{Raw: "GRBM_COUNT:device=1", Name: "GRBM_COUNT", Instance: -1, Device: 1}},
		{in: "TCC_HIT[2]:device=0", want: Request{Raw: "TCC_HIT[2]:device=0", Name: "TCC_HIT", Instance: 2, Device: 0}},
		{in: "TCC_HIT[x]", err: "not a non-negative integer"},
		{in: "SQ_WAVES:gpu=1", err: "only qualifier is :device=N"},
		{in: "[1]", err: "empty counter name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRequest(tt.in)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, r)
		})
	}
}

func TestEventsExpansion(t *testing.T) {
	db := loadDB(t, "gfx90a")
	tests := []struct {
		req  string
		want []aql.Event
	}{
		{"SQ_WAVES", []aql.Event{{Block: 6, Index: 0, EventID: 4}}},
		{"TCC_HIT[1]", []aql.Event{{Block: 12, Index: 1, EventID: 17}}},
		{"GPU_UTIL", []aql.Event{{Block: 3, EventID: 2}, {Block: 3, EventID: 0}}},
		{"MeanOccupancyPerCU", []aql.Event{{Block: 6, EventID: 5, Flags: 2}, {Block: 3, EventID: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.req, func(t *testing.T) {
			r, err := ParseRequest(tt.req)
			require.NoError(t, err)
			evs, err := db.Events(r)
			require.NoError(t, err)
			require.Equal(t, tt.want, evs)
		})
	}
	r, _ := ParseRequest("TCC_HIT")
	evs, err := db.Events(r)
	require.NoError(t, err)
	require.Len(t, evs, 32)
	r, _ = ParseRequest("TCC_HIT[32]")
	_, err = db.Events(r)
	require.ErrorContains(t, err, "TCC has 32 instances (0..31)")
	r, _ = ParseRequest("GPU_UTIL[0]")
	_, err = db.Events(r)
	require.ErrorContains(t, err, "only be given for a hardware counter")
}

func TestValidate(t *testing.T) {
	db := loadDB(t, "gfx90a")

	p, err := db.Validate([]string{"SQ_WAVES", "GRBM_COUNT", "GPU_UTIL", "TCC_HIT[0]"}, 0)
	require.NoError(t, err)
	require.Len(t, p.Passes, 1)
	// GPU_UTIL's GRBM events are shared with GRBM_COUNT: 3 distinct GRBM/SQ/TCC events + 1
	require.Len(t, p.Passes[0].Events, 4)

	_, err = db.Validate([]string{"SQ_WAVES", "SQ_WAVEZ"}, 0)
	var ue *UnknownCounterError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, "SQ_WAVES", ue.Suggestion)
	require.ErrorContains(t, err, `counter "SQ_WAVEZ" is not available on gfx90a; did you mean "SQ_WAVES"?`)

	_, err = db.Validate([]string{"TCC_HIT"}, 0)
	require.NoError(t, err)
	_, err = loadDB(t, "gfx1100").Validate([]string{"TCC_HIT"}, 0)
	require.ErrorContains(t, err, "(it is defined for gfx9, gfx900, gfx906, gfx908, gfx90a")

	// GRBM has two counters: three GRBM counters need two passes.
	names := []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY", "SQ_WAVES"}
	p, err = db.Validate(names, 0)
	var mp *MultiPassError
	require.ErrorAs(t, err, &mp)
	require.Equal(t, "pmc: GRBM_COUNT GRBM_GUI_ACTIVE SQ_WAVES\npmc: GRBM_CP_BUSY\n", mp.Plan.PMCLines())
	require.ErrorContains(t, err, "pmc: GRBM_COUNT GRBM_GUI_ACTIVE SQ_WAVES\npmc: GRBM_CP_BUSY")
	require.Len(t, p.Passes, 2)

	// A :device=N qualifier keeps the name only for that GPU.
	p, err = db.Validate([]string{"GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY:device=1"}, 0)
	require.NoError(t, err)
	require.Len(t, p.Passes[0].Requests, 2)
	_, err = db.Validate([]string{"GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY:device=1"}, 1)
	require.ErrorAs(t, err, &mp)
}

func TestAccumulateTakesTwoSlots(t *testing.T) {
	db := loadDB(t, "gfx90a")
	// 7 plain SQ counters + one accumulated one (its internal copy takes a
	// register too) exceed SQ's 8 counters.
	names := []string{"SQ_WAVES", "SQ_BUSY_CYCLES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_LDS",
		"SQ_INSTS_SMEM", "SQ_WAIT_INST_LDS", "MeanOccupancyPerCU"}
	p, err := db.PlanPasses(names, -1)
	require.NoError(t, err)
	require.Len(t, p.Passes, 2)
	require.Equal(t, "MeanOccupancyPerCU", p.Passes[1].Requests[0].Name)
}

func TestExtraCounterFile(t *testing.T) {
	db := loadDB(t, "gfx90a", WithExtraFile(filepath.Join("..", "..", "testdata", "counters", "extra.yaml")))
	c, ok := db.Lookup("WAVES_PER_ACTIVE_CYCLE")
	require.True(t, ok)
	require.Equal(t, Derived, c.Kind)
	last := db.Counters[len(db.Counters)-1]
	require.Equal(t, "MY_SQ_WAVES_RAW", last.Name, "extra counters are appended after the built-in ones")
	got, err := db.Evaluate(c, Inputs{"SQ_WAVES": records(DimShaderEngine, 1, 2, 3, 4), "GRBM_GUI_ACTIVE": {{Value: 5}}})
	require.NoError(t, err)
	require.Equal(t, []Record{{Value: 2}}, got)

	_, err = Load(db.Device, WithExtraFile(filepath.Join("..", "..", "testdata", "counters", "bad_extra.yaml")))
	require.ErrorContains(t, err, "give either block and event, or expression")
	_, err = Load(db.Device, WithExtraFile("no-such-file.yaml"))
	require.ErrorContains(t, err, "no-such-file.yaml")
	_, err = ParseExtra([]byte("counters: []"))
	require.ErrorContains(t, err, `no top-level "rocprofiler-sdk" key`)
}

// $ROCPROFILER_METRICS_PATH/counter_defs.yaml replaces the built-in table,
// as it replaces rocprofiler-sdk's: rocprofiler-compute's counters (an
// accumulate() over the kernel, a TCC channel named with its brackets) exist,
// the built-in ones it does not define do not, and -E still adds to it.
func TestDefinitionsFileReplacesTheBuiltinTable(t *testing.T) {
	defs := filepath.Join("..", "..", "testdata", "counters", "metrics", DefinitionsFileName)
	db := loadDB(t, "gfx90a", WithDefinitionsFile(defs),
		WithExtraFile(filepath.Join("..", "..", "testdata", "counters", "extra.yaml")))
	_, ok := db.Lookup("GRBM_COUNT")
	require.False(t, ok, "a built-in counter the file does not define")
	_, ok = db.Lookup("MY_SQ_WAVES_RAW")
	require.True(t, ok, "-E adds to the file's counters")
	_, ok = db.Lookup("simd_count")
	require.True(t, ok, "the agent constants stay")

	plan, err := db.Validate([]string{"SQC_DCACHE_INFLIGHT_LEVEL_ACCUM", "TCC_HIT[3]", "SQ_WAVES:device=0"}, 0)
	require.NoError(t, err)
	require.Len(t, plan.Passes, 1)
	r, err := db.ParseRequest("TCC_HIT[3]:device=0")
	require.NoError(t, err)
	require.Equal(t, Request{Raw: "TCC_HIT[3]:device=0", Name: "TCC_HIT[3]", Instance: -1, Device: 0}, r,
		"a name defined with brackets is that counter")
	r, err = db.ParseRequest("TCC_HIT[5]")
	require.NoError(t, err)
	require.Equal(t, 5, r.Instance, "an undefined NAME[i] is still an instance")

	accum, _ := db.Lookup("SQC_DCACHE_INFLIGHT_LEVEL_ACCUM")
	leaves, err := db.Leaves(accum)
	require.NoError(t, err)
	require.Len(t, leaves, 1)
	require.Equal(t, aql.AccumHiRes, leaves[0].Accum)
	evs, err := db.Events(Request{Name: "SQC_DCACHE_INFLIGHT_LEVEL_ACCUM", Instance: -1, Device: -1})
	require.NoError(t, err)
	require.Equal(t, uint32(337), evs[0].EventID)

	hit, _ := db.Lookup("TCC_HIT[3]")
	got, err := db.Evaluate(hit, Inputs{"TCC_HIT": records(DimInstance, 10, 11, 12, 13, 14)})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, 13.0, got[0].Value)

	builtin := loadDB(t, "gfx90a")
	_, ok = builtin.Lookup("SQC_DCACHE_INFLIGHT_LEVEL_ACCUM")
	require.False(t, ok, "rocprofiler-compute's own counter is not built in")

	_, err = Load(db.Device, WithDefinitionsFile(filepath.Join(t.TempDir(), DefinitionsFileName)))
	require.ErrorContains(t, err, "counter definitions")
}

func TestWriteAvail(t *testing.T) {
	db := loadDB(t, "gfx90a")
	var buf bytes.Buffer
	require.NoError(t, db.WriteAvail(&buf, 0))
	out := buf.String()
	require.True(t, strings.HasPrefix(out, "GPU:0\nName:gfx90a\nCounter_Name : cpu_cores_count\n"), out[:100])
	require.Contains(t, out, "Counter_Name : SQ_WAVES\n"+
		"Description : Count number of waves sent to distributed sequencers (SQs). This value represents the number of waves that are sent to each SQ. This only counts new waves sent since the start of collection (for dispatch profiling this is the timeframe of kernel execution, for agent profiling it is the timeframe between start_context and read counter data). A sum of all SQ_WAVES values will give the total number of waves started by the application during the collection timeframe. Returns one value per-SE (aggregates of SIMD values).\n"+
		"Block : SQ\nDimensions : DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:7]\n\n")
	require.Contains(t, out, "Counter_Name : GPU_UTIL\nDescription : Percentage of the time that GUI is active\n"+
		"Expression : 100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)\nDimensions : DIMENSION_INSTANCE[0:0]\n\n")
	require.Equal(t, len(db.Available()), strings.Count(out, "Counter_Name : "))

	path := filepath.Join("..", "..", "testdata", "counters", "avail_gfx90a.txt")
	if *update {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), out, "testdata/counters/avail_gfx90a.txt is the reviewed listing")
}

// update rewrites the golden files (go test -run X -update), as every
// package with golden files does.
var update = flag.Bool("update", false, "rewrite golden files")

func TestSplit(t *testing.T) {
	db := loadDB(t, "gfx1100")
	known, missing, err := db.Split([]string{"SQ_WAVES", "TCC_HIT", "GL2C_HIT[2]", "GRBM_COUNT:device=3"}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"SQ_WAVES", "GL2C_HIT[2]"}, known)
	require.Len(t, missing, 1)
	require.Equal(t, "TCC_HIT", missing[0].Name)
	_, _, err = db.Split([]string{"X[y]"}, 0)
	require.Error(t, err)
}
