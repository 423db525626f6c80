package options

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// ToolEnv returns the ROCPROF_* variables that carry this pass's
// configuration to the injected libraries, named as rocprofv3's launcher names
// them so that tools and wrappers that read them keep working. outputPath is
// the pass's resolved output directory.
func (c *Config) ToolEnv(outputPath string) map[string]string {
	env := map[string]string{
		optionEnv("output_directory"): outputPath,
		optionEnv("output_format"):    strings.Join(c.OutputFormat, ","),
	}
	if c.OutputFile != "" {
		env[optionEnv("output_file")] = c.OutputFile
	}
	// Switches are exported only when on ("overwrite if true"), each
	// under its option's variable; two have rules of their own below.
	for i := range Specs {
		sp := &Specs[i]
		if sp.Kind != KindBool || sp.Env == "" || sp.NotSupported != "" || sp.Dest == "kernel_rename" || sp.Dest == "att_serialize_all" {
			continue
		}
		if on, _ := sp.field(c).(*Tri); on != nil && on.On() {
			env[sp.Env] = "1"
		}
	}
	if c.MangledKernels.On() {
		env[envDemangleKernels] = "0"
	}
	if c.IsSet("kernel_rename") {
		env[optionEnv("kernel_rename")] = boolDigit(c.KernelRename.On())
	}
	if c.DisableSignalHandlers.IsSet() {
		env[envSignalHandlers] = boolDigit(!c.DisableSignalHandlers.On())
	}
	if c.Summary.On() || c.SummaryPerDomain.On() || len(c.SummaryGroups) > 0 {
		env[optionEnv("summary_units")] = c.SummaryUnits
		out := c.SummaryOutputFile
		if out == "" {
			out = "stderr"
		}
		env[optionEnv("summary_output_file")] = out
	}
	if len(c.SummaryGroups) > 0 {
		env[optionEnv("summary_groups")] = strings.Join(c.SummaryGroups, "##@@##")
	}
	if len(c.Pmc) > 0 {
		env[domainEnv(domain.Counters)] = "1"
		env[envCounters] = "pmc: " + strings.Join(c.Pmc, " ")
	}
	if len(c.PmcGroups) > 0 {
		env[domainEnv(domain.Counters)] = "1"
		lines := make([]string, len(c.PmcGroups))
		for i, g := range c.PmcGroups {
			lines[i] = "pmc: " + strings.Join(g, " ")
		}
		env[envCounterGroups] = strings.Join(lines, "\n")
		interval := c.PmcGroupInterval
		if interval == 0 {
			interval = 1
		}
		env[envCounterGroupsInterval] = strconv.Itoa(interval)
	}
	if c.PCSampling() {
		// The shim starts the sessions (docs/pc-sampling.md).
		env[domainEnv(domain.PCSampling)] = c.PcSamplingMethod
		env[optionEnv("pc_sampling_unit")] = c.PcSamplingUnit
		env[optionEnv("pc_sampling_interval")] = strconv.FormatUint(c.PcSamplingInterval, 10)
	}
	if c.KernelIncludeRegex != "" {
		env[optionEnv("kernel_include_regex")] = c.KernelIncludeRegex
	}
	if c.KernelExcludeRegex != "" {
		env[optionEnv("kernel_exclude_regex")] = c.KernelExcludeRegex
	}
	if len(c.KernelIterationRange) > 0 {
		env[optionEnv("kernel_iteration_range")] = strings.Join(c.KernelIterationRange, ", ")
	}
	if periods, _ := c.CollectionPeriodsNs(); len(periods) > 0 {
		parts := make([]string, len(periods))
		for i, p := range periods {
			parts[i] = strconv.FormatUint(p.DelayNs, 10) + ":" + strconv.FormatUint(p.DurationNs, 10) + ":" + strconv.FormatUint(p.Repeat, 10)
		}
		env[optionEnv("collection_period")] = strings.Join(parts, ";")
	}
	if c.AgentIndex != "" {
		env[optionEnv("agent_index")] = c.AgentIndex
	}
	if c.MinimumOutputData > 0 {
		env[envMinimumOutputBytes] = strconv.Itoa(c.MinimumOutputData * 1024)
	}
	if c.LogLevel != "" && c.LogLevel != "env" && c.LogLevel != "config" {
		for _, k := range []string{envLogLevel, envRocprofilerLogLevel, envRoctxLogLevel} {
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
			env[optionEnv("att_library_path")] = strings.Join(c.AttLibraryPath, ":")
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

// MetricsPathEnv is rocprofiler-sdk's variable naming the directory of the
// counter definitions file (counter_defs.yaml) it reads instead of its own;
// rocprofiler-compute sets it for each pass.
const MetricsPathEnv = "ROCPROFILER_METRICS_PATH"

// CounterDefsFileName is the definitions file in $ROCPROFILER_METRICS_PATH.
const CounterDefsFileName = "counter_defs.yaml"

// MetricsDefinitionsFile is $ROCPROFILER_METRICS_PATH/counter_defs.yaml, or
// "" when the variable is unset or empty.
func MetricsDefinitionsFile(lookup func(string) (string, bool)) string {
	dir, ok := lookup(MetricsPathEnv)
	if !ok || dir == "" {
		return ""
	}
	return filepath.Join(dir, CounterDefsFileName)
}

// CounterFile is a counter definitions file the shim reads: rocprof-go
// copies Source into the pass's private directory as Name, and hands the
// copy's path to the app's processes in Env. A file, not the YAML itself in
// a variable as rocprofv3 does: Linux refuses a variable over 128 KiB
// ("argument list too long"), and rocprofiler-compute's definitions are
// larger.
type CounterFile struct {
	Source, Name, Env string
}

// CounterFiles lists the counter definitions files of a pass that collects
// counters or traces threads: $ROCPROFILER_METRICS_PATH's and -E's.
func (c *Config) CounterFiles() []CounterFile {
	if !c.CollectsCounters() && !c.AdvancedThreadTrace.On() {
		return nil
	}
	var out []CounterFile
	if c.CounterDefs != "" {
		out = append(out, CounterFile{Source: c.CounterDefs, Name: CounterDefsFileName, Env: envGoCounterDefsFile})
	}
	if c.ExtraCounters != "" {
		out = append(out, CounterFile{Source: c.ExtraCounters, Name: "extra_counters.yaml", Env: envGoExtraCountersFile})
	}
	return out
}
