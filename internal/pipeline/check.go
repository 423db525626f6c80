package pipeline

import (
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// resolvePlan turns Options.Args and the app's argv into a plan, as the
// command line would (Args, the ROCPROF_* environment of opts.Environ, the
// config file); a plan the CLI already resolved is taken as it is.
func resolvePlan(opts Options, argv []string) (*options.Plan, error) {
	if opts.plan != nil {
		return opts.plan, nil
	}
	args := append(append([]string{}, opts.Args...), "--")
	args = append(args, argv...)
	cl, err := options.ParseArgs(args)
	if err != nil {
		return nil, err
	}
	if cl.Help || cl.Version {
		return nil, &options.UsageError{Option: "--help/--version", Msg: "not meaningful in Run"}
	}
	if opts.ConfigFile != "" && cl.Config.ConfigFile == "" {
		cl.Config.ConfigFile = opts.ConfigFile
	}
	lookup := lookupIn(opts.Environ)
	return options.Resolve(cl, options.Sources{LookupEnv: lookup, DefaultConfigFile: options.DefaultConfigPath(lookup)})
}

// gpus is what a run found of the GPUs before its app started.
type gpus struct {
	agents []topology.Agent
	err    error // why none were found (no GPU, no virtual GPU)
}

// checkPlan makes the checks a run makes before its app starts that need
// no output directory: counters against the GPUs' architectures, thread
// trace GPU indices, output formats that need a library. It returns the
// GPUs it found.
func checkPlan(plan *options.Plan, environ []string) (gpus, error) {
	var g gpus
	g.agents, g.err = topology.Detect(plan.Passes[0].VirtualGPU, lookupIn(environ), topology.DefaultSysfs)
	if err := validateCounters(plan, g.agents, g.err); err != nil {
		return g, err
	}
	if err := validateATT(plan, g.agents, g.err); err != nil {
		return g, err
	}
	if err := validatePCSampling(plan, g.agents, g.err, environ); err != nil {
		return g, err
	}
	if _, _, err := writerSettings(envLookup); err != nil {
		return g, err
	}
	return g, validateFormats(plan)
}
