package options

import (
	"os"
	"sort"
	"strconv"
	"strings"
)

// ToolEnv returns the ROCPROF_* variables that carry this pass's
// configuration to the injected libraries, named as rocprofv3's launcher names
// them so that tools and wrappers that read them keep working. outputPath is
// the pass's resolved output directory.
func (c *Config) ToolEnv(outputPath string) map[string]string {
	env := map[string]string{
		"ROCPROF_OUTPUT_PATH":   outputPath,
		"ROCPROF_OUTPUT_FORMAT": strings.Join(c.OutputFormat, ","),
	}
	if c.OutputFile != "" {
		env["ROCPROF_OUTPUT_FILE_NAME"] = c.OutputFile
	}
	// Trace switches are exported only when on ("overwrite if true").
	for _, t := range []struct {
		on  Tri
		env string
	}{
		{c.HipRuntimeTrace, "ROCPROF_HIP_RUNTIME_API_TRACE"},
		{c.HipCompilerTrace, "ROCPROF_HIP_COMPILER_API_TRACE"},
		{c.HsaCoreTrace, "ROCPROF_HSA_CORE_API_TRACE"},
		{c.HsaAmdTrace, "ROCPROF_HSA_AMD_EXT_API_TRACE"},
		{c.HsaImageTrace, "ROCPROF_HSA_IMAGE_EXT_API_TRACE"},
		{c.HsaFinalizerTrace, "ROCPROF_HSA_FINALIZER_EXT_API_TRACE"},
		{c.MarkerTrace, "ROCPROF_MARKER_API_TRACE"},
		{c.KernelTrace, "ROCPROF_KERNEL_TRACE"},
		{c.MemoryCopyTrace, "ROCPROF_MEMORY_COPY_TRACE"},
		{c.MemoryAllocationTrace, "ROCPROF_MEMORY_ALLOCATION_TRACE"},
		{c.ScratchMemoryTrace, "ROCPROF_SCRATCH_MEMORY_TRACE"},
		{c.RcclTrace, "ROCPROF_RCCL_API_TRACE"},
		{c.GroupByQueue, "ROCPROF_GROUP_BY_QUEUE"},
		{c.OutputConfig, "ROCPROF_OUTPUT_CONFIG_FILE"},
		{c.Stats, "ROCPROF_STATS"},
		{c.Summary, "ROCPROF_STATS_SUMMARY"},
		{c.SummaryPerDomain, "ROCPROF_STATS_SUMMARY_PER_DOMAIN"},
		{c.TruncateKernels, "ROCPROF_TRUNCATE_KERNELS"},
		{c.SelectedRegions, "ROCPROF_SELECTED_REGIONS"},
		{c.AdvancedThreadTrace, "ROCPROF_ADVANCED_THREAD_TRACE"},
	} {
		if t.on.On() {
			env[t.env] = "1"
		}
	}
	if c.MangledKernels.On() {
		env["ROCPROF_DEMANGLE_KERNELS"] = "0"
	}
	if c.IsSet("kernel_rename") {
		env["ROCPROF_KERNEL_RENAME"] = boolDigit(c.KernelRename.On())
	}
	if c.DisableSignalHandlers.IsSet() {
		env["ROCPROF_SIGNAL_HANDLERS"] = boolDigit(!c.DisableSignalHandlers.On())
	}
	if c.Summary.On() || c.SummaryPerDomain.On() || len(c.SummaryGroups) > 0 {
		env["ROCPROF_STATS_SUMMARY_UNITS"] = c.SummaryUnits
		out := c.SummaryOutputFile
		if out == "" {
			out = "stderr"
		}
		env["ROCPROF_STATS_SUMMARY_OUTPUT"] = out
	}
	if len(c.SummaryGroups) > 0 {
		env["ROCPROF_STATS_SUMMARY_GROUPS"] = strings.Join(c.SummaryGroups, "##@@##")
	}
	if len(c.Pmc) > 0 {
		env["ROCPROF_COUNTER_COLLECTION"] = "1"
		env["ROCPROF_COUNTERS"] = "pmc: " + strings.Join(c.Pmc, " ")
	}
	if len(c.PmcGroups) > 0 {
		env["ROCPROF_COUNTER_COLLECTION"] = "1"
		lines := make([]string, len(c.PmcGroups))
		for i, g := range c.PmcGroups {
			lines[i] = "pmc: " + strings.Join(g, " ")
		}
		env["ROCPROF_COUNTER_GROUPS"] = strings.Join(lines, "\n")
		interval := c.PmcGroupInterval
		if interval == 0 {
			interval = 1
		}
		env["ROCPROF_COUNTER_GROUPS_INTERVAL"] = strconv.Itoa(interval)
	}
	if c.ExtraCounters != "" {
		// The tool side reads definitions from the variable, as rocprofv3's does;
		// the file was already read and checked when the counters were validated.
		if data, err := os.ReadFile(c.ExtraCounters); err == nil {
			env["ROCPROF_EXTRA_COUNTERS_CONTENTS"] = string(data)
		}
	}
	if c.KernelIncludeRegex != "" {
		env["ROCPROF_KERNEL_FILTER_INCLUDE_REGEX"] = c.KernelIncludeRegex
	}
	if c.KernelExcludeRegex != "" {
		env["ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX"] = c.KernelExcludeRegex
	}
	if len(c.KernelIterationRange) > 0 {
		env["ROCPROF_KERNEL_FILTER_RANGE"] = strings.Join(c.KernelIterationRange, ", ")
	}
	if periods, _ := c.CollectionPeriodsNs(); len(periods) > 0 {
		parts := make([]string, len(periods))
		for i, p := range periods {
			parts[i] = strconv.FormatUint(p.DelayNs, 10) + ":" + strconv.FormatUint(p.DurationNs, 10) + ":" + strconv.FormatUint(p.Repeat, 10)
		}
		env["ROCPROF_COLLECTION_PERIOD"] = strings.Join(parts, ";")
	}
	if c.AgentIndex != "" {
		env["ROCPROF_AGENT_INDEX"] = c.AgentIndex
	}
	if c.MinimumOutputData > 0 {
		env["ROCPROF_MINIMUM_OUTPUT_BYTES"] = strconv.Itoa(c.MinimumOutputData * 1024)
	}
	if c.LogLevel != "" && c.LogLevel != "env" && c.LogLevel != "config" {
		for _, k := range []string{"ROCPROF_LOG_LEVEL", "ROCPROFILER_LOG_LEVEL", "ROCTX_LOG_LEVEL"} {
			env[k] = c.LogLevel
		}
	}
	if c.AdvancedThreadTrace.On() {
		for _, p := range []struct {
			dest string
			set  bool
		}{
			{"att_target_cu", true}, {"att_simd_select", true}, {"att_buffer_size", true},
			{"att_shader_engine_mask", true}, {"att_gpu_index", c.AttGpuIndex != ""},
			{"att_perfcounters", c.AttPerfcounters != ""}, {"att_perfcounter_ctrl", c.AttPerfcounterCtrl != 0},
			{"att_serialize_all", c.AttSerializeAll.On()},
		} {
			if !p.set {
				continue
			}
			s, _ := SpecByDest(p.dest)
			v := s.valueString(c)
			if v == "true" {
				v = "1"
			}
			env[s.Env] = v
		}
		if len(c.AttLibraryPath) > 0 {
			env["ROCPROF_ATT_LIBRARY_PATH"] = strings.Join(c.AttLibraryPath, ":")
		}
		c.attEnv(env)
	}
	return env
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// SortedKeys returns the keys of an environment map in order, for printing.
func SortedKeys(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Describe renders every option's resolved value, one "dest = value" per line,
// for --log-level config and --echo.
func (c *Config) Describe() []string {
	var lines []string
	for i := range Specs {
		s := &Specs[i]
		v := s.valueString(c)
		if v == "" || v == "unset" {
			continue
		}
		if !c.IsSet(s.Dest) && !s.isActive(c) {
			continue // an option nobody asked for (false, 0)
		}
		if !c.IsSet(s.Dest) && s.Default != "" {
			def := &Config{}
			if s.setValue(def, s.Default) == nil && s.valueString(def) == v {
				continue // an untouched default
			}
		}
		lines = append(lines, s.Dest+" = "+v)
	}
	return lines
}
