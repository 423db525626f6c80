package pipeline

import (
	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// validatePassCounters checks one pass's counters on every GPU before the app
// starts: unknown names (with the nearest suggestion) and --pmc sets or pmc:
// lines that need more than one pass fail at once, with a valid split.
func validatePassCounters(cfg *options.Config, agents []topology.Agent) error {
	groups := cfg.CounterGroups()
	for _, a := range agents {
		dev, err := counters.DeviceFromProperties(a.Arch, a.Properties)
		if err != nil {
			return err
		}
		opts := []counters.Option{counters.WithProperties(counters.PropertiesFromKFD(a.Properties))}
		if cfg.CounterDefs != "" {
			opts = append(opts, counters.WithDefinitionsFile(cfg.CounterDefs))
		}
		if cfg.ExtraCounters != "" {
			opts = append(opts, counters.WithExtraFile(cfg.ExtraCounters))
		}
		db, err := counters.Load(dev, opts...)
		if err != nil {
			return err
		}
		for _, g := range groups {
			if _, err := db.Validate(g, a.Index); err != nil {
				return err
			}
		}
	}
	return nil
}
