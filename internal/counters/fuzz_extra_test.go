package counters

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Fuzz targets for the counter parsers users feed directly: derived-counter
// expressions (from -E files and the built-in database), --pmc requests and
// -E extra counter files. Their seeds run in every `go test`; `make fuzz`
// runs them for real. They assert that bad input is an error, never a panic,
// and that what parses also plans and evaluates without panicking.

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{
		"100*GRBM_GUI_ACTIVE/GRBM_COUNT", "reduce(TCC_HIT,sum)", "reduce(SQ_WAVES,max,[SHADER_ENGINE])",
		"accumulate(SQ_LEVEL_WAVES,HIGH_RES)", "select(TCC_HIT,[DIMENSION_INSTANCE=[1,3]])",
		"select(TCC_HIT,[DIMENSION_INSTANCE=[0:1]])", "X // c\n+1", "(((", "10-TA_TA_BUSY", "GRBM_COUNT/0",
		"reduce(accumulate(SQ_LEVEL_WAVES,HIGH_RES),sum)/reduce(SQ_LEVEL_WAVES,sum)", "CU_NUM*99999999999999999999",
	} {
		f.Add(s)
	}
	db := loadDB(f, "gfx90a:xcc=1,se=8,cu=104,sa=1")
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
	f.Fuzz(func(t *testing.T, src string) {
		n, err := Parse(src)
		if err != nil {
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "Parse(%q) returned %T, want *ParseError", src, err)
			return
		}
		require.NotNil(t, n)
		_ = n.String()
		Walk(n, func(Node) {})
		c := &Counter{Name: "FUZZ_EXPR", Kind: Derived, Expression: src, Expr: n}
		_, _ = db.Leaves(c)
		_, _ = db.Evaluate(c, in)
	})
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{"SQ_WAVES", "TCC_HIT[3]", "SQ_WAVES:device=1", "TCC_HIT[3]:device=0", "[", "a:b=c", ":device=-1", "X[]"} {
		f.Add(s)
	}
	db := loadDB(f, "gfx90a")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequest(s)
		if err != nil {
			return
		}
		require.NotEmpty(t, r.Name)
		require.GreaterOrEqual(t, r.Instance, -1)
		require.GreaterOrEqual(t, r.Device, -1)
		_, _ = db.Events(r)
		_, _ = db.PlanPasses([]string{s}, 0)
	})
}

func FuzzParseExtra(f *testing.F) {
	for _, s := range []string{
		"rocprofiler-sdk:\n  counters-schema-version: 1\n  counters:\n  - name: MY\n    description: d\n    definitions:\n    - architectures: [gfx90a]\n      expression: reduce(SQ_WAVES,sum)/GRBM_GUI_ACTIVE\n",
		"rocprofiler-sdk:\n  counters:\n  - name: RAW\n    definitions:\n    - architectures: [gfx90a]\n      block: SQ\n      event: 4\n",
		"rocprofiler-sdk:\n  counters:\n  - name: RAW\n    definitions:\n    - architectures: [gfx90a]\n      block: NOPE\n      event: -1\n",
		"counters: []", "rocprofiler-sdk: 3", "{{{",
	} {
		f.Add([]byte(s))
	}
	dev := loadDB(f, "gfx90a").Device
	f.Fuzz(func(t *testing.T, raw []byte) {
		cs, err := ParseExtra(raw)
		if err != nil {
			return
		}
		db, err := Load(dev, WithExtra(cs))
		if err != nil {
			return
		}
		for _, fc := range cs {
			if c, ok := db.Lookup(fc.Name); ok {
				_, _ = db.Leaves(c)
			}
		}
	})
}
