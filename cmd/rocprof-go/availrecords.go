package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// The records format of `rocprof-go avail --format records`: what
// librocprofv3-list-avail.so (listavail/list_avail.c) reads to answer
// rocprofiler-sdk's list-avail ABI. One record per line, fields separated
// by tabs, a field's tab, newline and backslash written \t, \n and \\:
//
//	agent   HANDLE  AGENT_JSON
//	counter AGENT_HANDLE  IS_DERIVED  IS_CONSTANT  NAME  DESCRIPTION  BLOCK  EXPRESSION
//	dim     DIMENSION_ID  INSTANCES  DIMENSION_NAME      (of the counter before it)
//	pcs     AGENT_HANDLE  METHOD  UNIT  MIN_INTERVAL  MAX_INTERVAL  FLAGS
//
// An agent's handle is its KFD node id; its JSON is the agent info
// rocprofiler-sdk's agent_info() gives (type 2: a GPU). A pcs record is one
// of the agent's PC-sampling configurations (what `avail` lists after the
// counters; they follow the agent's record), in the numbers of
// rocprofiler-sdk's enums, which its pc_sample_config() returns:
// rocprofiler_pc_sampling_method_t, rocprofiler_pc_sampling_unit_t and
// rocprofiler_pc_sampling_configuration_flags_t (pcsMethods, pcsUnits,
// pcsFlagPow2). Version 2 added them; the library ignores record kinds it
// does not know.
const availRecordsHeader = "rocprof-go-list-avail 2"

// rocprofiler-sdk's numbers (rocprofiler-sdk/fwd.h, pc_sampling.h) of the
// method and unit names rocprof-go's configurations use.
var (
	pcsMethods = map[string]int{"stochastic": 1, "host_trap": 2}
	pcsUnits   = map[string]int{"instructions": 1, "cycles": 2, "time": 3}
)

// pcsFlagPow2 is ROCPROFILER_PC_SAMPLING_CONFIGURATION_FLAGS_INTERVAL_POW2.
const pcsFlagPow2 = 1

func escapeRecordField(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(s)
}

// writeAvailRecords writes the records of one agent: its PC-sampling
// configurations pcs, then its counters in the order --list-avail lists
// them.
func writeAvailRecords(w *bufio.Writer, ag topology.Agent, db *counters.DB, pcs []options.PCSamplingConfig) error {
	info := map[string]any{
		"id":                   map[string]any{"handle": ag.NodeID},
		"type":                 2,
		"node_id":              ag.NodeID,
		"logical_node_id":      ag.NodeID,
		"logical_node_type_id": ag.Index,
		"gpu_index":            ag.Index,
		"name":                 db.Arch,
		"vendor_name":          "AMD",
		"product_name":         db.Arch,
		"virtual":              ag.Virtual,
	}
	for k, v := range ag.Properties {
		if _, taken := info[k]; !taken {
			info[k] = v
		}
	}
	js, err := json.Marshal(info)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "agent\t%d\t%s\n", ag.NodeID, escapeRecordField(string(js)))
	for _, c := range pcs {
		method, unit := pcsMethods[c.Method], pcsUnits[c.Unit]
		if method == 0 || unit == 0 {
			return fmt.Errorf("GPU %d: PC-sampling configuration %s/%s has no rocprofiler-sdk number", ag.Index, c.Method, c.Unit)
		}
		flags := 0
		if c.Pow2 {
			flags = pcsFlagPow2
		}
		fmt.Fprintf(w, "pcs\t%d\t%d\t%d\t%d\t%d\t%d\n", ag.NodeID, method, unit, c.Min, c.Max, flags)
	}
	for _, c := range db.Available() {
		derived, constant, block, expr := 0, 0, "", ""
		switch c.Kind {
		case counters.Derived:
			derived, expr = 1, c.Expression
		case counters.Constant:
			constant = 1
		default:
			block = c.Block
		}
		fmt.Fprintf(w, "counter\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", ag.NodeID, derived, constant,
			escapeRecordField(c.Name), escapeRecordField(strings.Join(strings.Fields(c.Description), " ")),
			escapeRecordField(block), escapeRecordField(expr))
		dims, _ := db.Dimensions(c)
		for _, d := range dims {
			fmt.Fprintf(w, "dim\t%d\t%d\t%s\n", d.Dim, d.Size, d.Dim.String())
		}
	}
	return nil
}

// configVirtualGPU is the config file's virtual_gpu, which `avail` lists
// without --arch or --virtual-gpu (as rocprof-go -L does, so a client that
// lists through avail sees the GPUs a run of the same configuration
// profiles); "" for the KFD topology's GPUs.
func configVirtualGPU(lookup func(string) (string, bool)) string {
	cl, err := options.ParseArgs([]string{"--list-avail"})
	if err != nil {
		return ""
	}
	plan, err := options.Resolve(cl, options.Sources{LookupEnv: lookup, DefaultConfigFile: options.DefaultConfigPath(lookup)})
	if err != nil || len(plan.Passes) == 0 {
		return ""
	}
	return plan.Passes[0].VirtualGPU
}

// writeAvailFormat writes the listing in format ("text": rocprofv3's; or
// "records").
func writeAvailFormat(w io.Writer, format string, archs []string, virtualArch string, lookup func(string) (string, bool),
	defs, extra string) error {
	if len(archs) == 0 && virtualArch == "" {
		virtualArch = configVirtualGPU(lookup)
	}
	switch format {
	case "", "text":
		return writeAvail(w, archs, virtualArch, defs, extra)
	case "records":
	default:
		return &usageError{fmt.Sprintf("avail --format %q: use text or records", format)}
	}
	dbs, err := availDBs(archs, virtualArch, lookup, defs, extra)
	if err != nil {
		return err
	}
	_, pcs := availPCSampling(os.Stderr, archs, virtualArch, dbs)
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, availRecordsHeader)
	for i, d := range dbs {
		if err := writeAvailRecords(bw, d.agent, d.db, pcs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}
