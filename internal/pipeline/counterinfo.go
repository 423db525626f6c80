package pipeline

import (
	"sync"

	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// counterDescriber describes the counters a run sampled as its counter
// definitions define them (the built-in ones, or $ROCPROFILER_METRICS_PATH's,
// and -E's), one database per architecture, loaded when first asked: JSON's
// counters list and ROCpd's rocpd_info_pmc take description, block,
// expression, is_derived, is_constant and dimension ids from it, as
// rocprofv3 takes them from its counter info.
func counterDescriber(c *options.Config) func(arch, name string) (model.CounterMeta, bool) {
	if !c.CollectsCounters() {
		return nil
	}
	var opts []counters.Option
	if c.CounterDefs != "" {
		opts = append(opts, counters.WithDefinitionsFile(c.CounterDefs))
	}
	if c.ExtraCounters != "" {
		opts = append(opts, counters.WithExtraFile(c.ExtraCounters))
	}
	var mu sync.Mutex
	dbs := map[string]*counters.DB{}
	return func(arch, name string) (model.CounterMeta, bool) {
		mu.Lock()
		defer mu.Unlock()
		db, ok := dbs[arch]
		if !ok {
			db, _ = counters.ForAgent(arch, opts...) // an unknown architecture: no descriptions
			dbs[arch] = db
		}
		if db == nil {
			return model.CounterMeta{}, false
		}
		ctr, ok := db.Lookup(name)
		if !ok {
			return model.CounterMeta{}, false
		}
		m := model.CounterMeta{Description: ctr.Description}
		switch ctr.Kind {
		case counters.Basic:
			m.Block = ctr.Block
		case counters.Derived:
			m.Derived, m.Expression = true, ctr.Expression
		case counters.Constant:
			m.Constant = true
		}
		if dims, err := db.Dimensions(ctr); err == nil {
			for _, d := range dims {
				m.DimensionIDs = append(m.DimensionIDs, uint64(d.Dim))
			}
		}
		return m, true
	}
}
