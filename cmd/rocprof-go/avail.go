package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/pcsprobe"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

func init() { registerSubcommand(newAvailCmd) }

// listAvail is --list-avail: the counters of the agents a pass would use.
func listAvail(w io.Writer, cfg *options.Config) error {
	return writeAvail(w, nil, cfg.VirtualGPU, cfg.CounterDefs, cfg.ExtraCounters)
}

func newAvailCmd() *cobra.Command {
	var archs []string
	var extra, virtual, format string
	cmd := &cobra.Command{
		Use:   "avail [--arch AGENT]... [-E FILE]",
		Short: "list the counters (basic and derived) of the GPUs present or of named architectures",
		Long: `Prints rocprofv3's --list-avail listing: per GPU a "GPU:<index>" and "Name:<gfx>" header,
then for each counter its name, description, Block (hardware counters) or Expression (derived
counters) and Dimensions. Agent-property constants (simd_count, ...) come first.

  rocprof-go avail                        # the GPUs in the KFD topology
  rocprof-go avail --virtual-gpu gfx90a   # the virtual GPU's agents
  rocprof-go avail --arch gfx942:xcc=8,se=32,cu=304,sa=1 --arch gfx1100

An AGENT is an architecture name, optionally with its configuration (xcc, se, cu: totals
across XCCs; sa: shader arrays per SE); without one the architecture's reference part is used.
-E adds the counters of an extra counter file (rocprofiler-sdk YAML schema). When
ROCPROFILER_METRICS_PATH is set, $ROCPROFILER_METRICS_PATH/counter_defs.yaml replaces the
built-in definitions, as it does for rocprofiler-sdk. Without --arch and --virtual-gpu, the
config file's virtual_gpu is listed when it names one, as rocprof-go -L does.
--format records is the line format librocprofv3-list-avail.so reads (docs/rocprofiler-compute.md).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 0 {
				return &usageError{fmt.Sprintf("avail takes no arguments (got %q); name architectures with --arch", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeAvailFormat(cmd.OutOrStdout(), format, archs, virtual, os.LookupEnv,
				options.MetricsDefinitionsFile(os.LookupEnv), extra)
		},
	}
	cmd.Flags().StringArrayVar(&archs, "arch", nil, "list the counters of this agent instead of the detected GPUs (repeatable)")
	cmd.Flags().StringVarP(&extra, "extra-counters", "E", "", "YAML file with extra counter definitions")
	cmd.Flags().StringVar(&virtual, "virtual-gpu", "", "list the virtual GPU's agents of this architecture (default: the config file's virtual_gpu)")
	cmd.Flags().StringVar(&format, "format", "text", "text (rocprofv3's listing) or records (what librocprofv3-list-avail.so reads: docs/rocprofiler-compute.md)")
	return cmd
}

// availDB is one agent of a listing and its counters.
type availDB struct {
	agent topology.Agent
	db    *counters.DB
}

// availDBs are the counters of the named agents (--arch), or else of the
// detected (or virtual) GPUs. defs, when not "", replaces the built-in
// definitions ($ROCPROFILER_METRICS_PATH); extra adds to them (-E).
func availDBs(archs []string, virtualArch string, lookup func(string) (string, bool), defs, extra string) ([]availDB, error) {
	var opts []counters.Option
	if defs != "" {
		opts = append(opts, counters.WithDefinitionsFile(defs))
	}
	if extra != "" {
		opts = append(opts, counters.WithExtraFile(extra))
	}
	var out []availDB
	if len(archs) > 0 {
		for i, a := range archs {
			db, err := counters.ForAgent(a, opts...)
			if err != nil {
				return nil, err
			}
			out = append(out, availDB{topology.Agent{Index: i, NodeID: i + 1, Arch: db.Arch}, db})
		}
		return out, nil
	}
	agents, err := topology.Detect(virtualArch, lookup, topology.DefaultSysfs)
	if err != nil {
		return nil, err
	}
	for _, ag := range agents {
		dev, err := counters.DeviceFromProperties(ag.Arch, ag.Properties)
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %w", ag.Index, err)
		}
		db, err := counters.Load(dev, append(opts, counters.WithProperties(counters.PropertiesFromKFD(ag.Properties)))...)
		if err != nil {
			return nil, err
		}
		out = append(out, availDB{ag, db})
	}
	return out, nil
}

// writeAvail lists the counters of the named agents, or else of the detected
// (or virtual) GPUs, as rocprofv3 does.
func writeAvail(w io.Writer, archs []string, virtualArch, defs, extra string) error {
	dbs, err := availDBs(archs, virtualArch, os.LookupEnv, defs, extra)
	if err != nil {
		return err
	}
	for _, d := range dbs {
		if err := d.db.WriteAvail(w, d.agent.Index); err != nil {
			return err
		}
	}
	agents, cfgs := availPCSampling(os.Stderr, archs, virtualArch, dbs)
	return writePCSamplingText(w, agents, cfgs)
}

// availPCSampling is the PC-sampling configurations of each listed agent
// (cfgs[i] of dbs[i]; none for all when the listing names architectures,
// which have no runtime to ask, or when the system's runtime has no PC
// sampling: ROCm 5.x and 6.1), with the notes of pcSamplingConfigsOf. Both
// formats of avail list these.
func availPCSampling(notes io.Writer, archs []string, virtualArch string, dbs []availDB) ([]topology.Agent, [][]options.PCSamplingConfig) {
	agents := make([]topology.Agent, len(dbs))
	for i, d := range dbs {
		agents[i] = d.agent
	}
	if len(archs) > 0 {
		return agents, make([][]options.PCSamplingConfig, len(dbs))
	}
	rocr, offers := launch.PCSamplingRuntime(nil, "", os.Environ())
	if !offers {
		return agents, make([][]options.PCSamplingConfig, len(dbs))
	}
	if virtualArch == "" && len(agents) > 0 && agents[0].Virtual {
		virtualArch = agents[0].Arch
	}
	gpus, err := probePCSampling(rocr, virtualArch)
	return agents, pcSamplingConfigsOf(notes, agents, gpus, err)
}

// writePCSamplingAvail lists the PC-sampling configurations of the GPUs that
// have any (pcSamplingConfigsOf), as rocprofv3 -L does after the counters.
func writePCSamplingAvail(w, notes io.Writer, agents []topology.Agent, gpus []pcsprobe.GPU, probeErr error) error {
	return writePCSamplingText(w, agents, pcSamplingConfigsOf(notes, agents, gpus, probeErr))
}

// pcSamplingConfigsOf are the PC-sampling configurations of each agent:
// the runtime's (hsa_ven_amd_pcs_iterate_configuration, asked by a probe
// process: gpus, matched to the agents by KFD node id, else by order); when
// the probe failed (probeErr) or the runtime could not list a GPU's,
// rocprof-go's table of what the driver reports per architecture, with a
// note.
func pcSamplingConfigsOf(notes io.Writer, agents []topology.Agent, gpus []pcsprobe.GPU, probeErr error) [][]options.PCSamplingConfig {
	byNode := map[int]*pcsprobe.GPU{}
	nodes := false // the runtime reported node ids
	for i := range gpus {
		byNode[int(gpus[i].Node)] = &gpus[i]
		nodes = nodes || gpus[i].Node != 0
	}
	if probeErr != nil {
		fmt.Fprintf(notes, "rocprof-go: note: the PC-sampling configurations below are rocprof-go's table of what the driver offers per architecture: the runtime could not be asked (%v)\n", probeErr)
	}
	out := make([][]options.PCSamplingConfig, len(agents))
	for i, ag := range agents {
		g := byNode[ag.NodeID]
		if !nodes {
			g = nil
			if i < len(gpus) {
				g = &gpus[i] // no node ids: the enumeration order
			}
		}
		switch {
		case probeErr != nil:
			out[i] = options.PCSamplingConfigs(ag.Arch)
		case g == nil || g.Err != "":
			why := "the runtime does not list it"
			if g != nil {
				why = g.Err
			}
			out[i] = options.PCSamplingConfigs(ag.Arch)
			if len(out[i]) > 0 {
				fmt.Fprintf(notes, "rocprof-go: note: GPU %d's PC-sampling configurations are rocprof-go's table for %s (%s)\n", ag.Index, ag.Arch, why)
			}
		default:
			for _, c := range g.Configs {
				out[i] = append(out[i], options.PCSamplingConfig{Method: c.Method, Unit: c.Unit, Min: c.Min, Max: c.Max, Pow2: c.Pow2})
			}
		}
	}
	return out
}

// writePCSamplingText writes rocprofv3's listing (rocprofv3-avail info
// --pc-sampling) of the agents with configurations: per GPU its index and
// name, then each configuration's method, unit (rocprofiler-sdk's words:
// time, cycle, instructions), interval bounds and flags.
func writePCSamplingText(w io.Writer, agents []topology.Agent, cfgs [][]options.PCSamplingConfig) error {
	unit := map[string]string{"time": "time", "cycles": "cycle", "instructions": "instructions"}
	for i, ag := range agents {
		if len(cfgs[i]) == 0 {
			continue
		}
		fmt.Fprintf(w, "%-8s:\t%d\n%-8s:\t%s\n%-8s:\n", "GPU", ag.Index, "Name", ag.Arch, "configs")
		for _, c := range cfgs[i] {
			flags := "none"
			if c.Pow2 {
				flags = "interval pow2"
			}
			fmt.Fprintf(w, "   %-20s:\t%s\n   %-20s:\t%s\n   %-20s:\t%d\n   %-20s:\t%d\n   %-20s:\t%s\n\n\n",
				"Method", c.Method, "Unit", unit[c.Unit], "Min_Interval", c.Min, "Max_Interval", c.Max, "Flags", flags)
		}
		if _, err := fmt.Fprint(w, "\n\n"); err != nil {
			return err
		}
	}
	return nil
}
