package options

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// Plan is the resolved run: the application and one configuration per pass.
type Plan struct {
	App      []string
	Passes   []*Config
	Warnings []string
	// Notes are shown at log level info and above (lines an input file
	// holds that rocprofv3 ignores too).
	Notes []string
	// ConfigFile is the rocprof-go config file that was read, if any.
	ConfigFile string
}

// Sources is where Resolve looks for defaults beyond the command line.
type Sources struct {
	// LookupEnv reads the environment (os.LookupEnv in the CLI).
	LookupEnv func(string) (string, bool)
	// DefaultConfigFile is read when --config is not given and it exists.
	DefaultConfigFile string
}

// DefaultConfigPath is $XDG_CONFIG_HOME/rocprof-go/config.yaml (or ~/.config/...).
func DefaultConfigPath(lookup func(string) (string, bool)) string {
	if d, ok := lookup("XDG_CONFIG_HOME"); ok && d != "" {
		return filepath.Join(d, "rocprof-go", "config.yaml")
	}
	if h, ok := lookup("HOME"); ok && h != "" {
		return filepath.Join(h, ".config", "rocprof-go", "config.yaml")
	}
	return ""
}

// Resolve merges the command line with input-file jobs, ROCPROF_* environment
// variables and the config file (in that order of precedence), expands
// aggregate options and validates every pass.
func Resolve(cl *CommandLine, src Sources) (*Plan, error) {
	plan := &Plan{App: cl.App}
	v, cfgPath, err := loadDefaults(cl.Config, src)
	if err != nil {
		return nil, err
	}
	plan.ConfigFile = cfgPath

	base := cl.Config
	var jobs []*Config
	if base.Input != "" {
		in, err := ReadInput(base.Input)
		if err != nil {
			return nil, err
		}
		plan.Notes = append(plan.Notes, in.Notes...)
		plan.Warnings = append(plan.Warnings, in.Warnings...)
		for i, job := range in.Jobs {
			where := fmt.Sprintf("%s job %d", base.Input, i+1)
			if in.PassPrefix == "pmc_" {
				where = fmt.Sprintf("%s pmc line %d", base.Input, i+1)
			}
			cfg, err := applyJob(base, job, where)
			if err != nil {
				return nil, err
			}
			switch {
			case len(in.Jobs) > 1:
				cfg.Pass = Pass{Index: i + 1, SubDir: in.PassPrefix + strconv.Itoa(i+1)}
			case len(cfg.Pmc) > 0:
				cfg.Pass = Pass{Index: 1, SubDir: in.PassPrefix + "1"}
			}
			jobs = append(jobs, cfg)
		}
	} else {
		jobs = []*Config{base.clone()}
	}

	lookup := src.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	defs := MetricsDefinitionsFile(lookup)
	for _, cfg := range jobs {
		if err := fillFromViper(cfg, v); err != nil {
			return nil, err
		}
		cfg.CounterDefs = defs
		if err := checkSupported(cfg); err != nil {
			return nil, err
		}
		warnings := cfg.expandAggregates()
		cfg.applyDefaults()
		w, notes, err := cfg.validate(len(plan.App) > 0, lookup)
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			if !slices.Contains(plan.Notes, n) {
				plan.Notes = append(plan.Notes, n)
			}
		}
		if err := cfg.checkCounterDefs(); err != nil {
			return nil, err
		}
		for _, s := range append(warnings, w...) {
			if !slices.Contains(plan.Warnings, s) {
				plan.Warnings = append(plan.Warnings, s)
			}
		}
		plan.Passes = append(plan.Passes, cfg)
	}
	if len(plan.Passes) > 1 && plan.Passes[0].Attaching() && !plan.countersOnly() {
		return nil, &UsageError{Option: "--attach", Msg: fmt.Sprintf("%s holds %d jobs (or pmc lines): an attach is one pass over the running process; give one job, or attach once per job", base.Input, len(plan.Passes))}
	}
	return plan, nil
}

// loadDefaults prepares viper with the ROCPROF_* environment bindings and the
// config file.
func loadDefaults(c *Config, src Sources) (*viper.Viper, string, error) {
	v := viper.New()
	lookup := src.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for _, s := range Specs {
		if s.Env == "" || !envIsDefault(s.Dest) {
			continue
		}
		if val, ok := lookup(s.Env); ok && val != "" {
			v.Set("env."+s.Dest, envValue(s.Dest, val))
		}
	}
	path := c.ConfigFile
	explicit := path != ""
	if !explicit {
		path = src.DefaultConfigFile
	}
	if path == "" {
		return v, "", nil
	}
	// Read here, not by viper: a FIFO is refused instead of waited on.
	data, err := atomicfile.ReadInput(path, maxConfigBytes)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return v, "", nil
		}
		return nil, "", fmt.Errorf("config file %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, "", fmt.Errorf("config file %s is larger than %d MiB: a config file holds option values; check the path", path, maxConfigBytes>>20)
	}
	fileV := viper.New()
	fileV.SetConfigType(strings.TrimPrefix(filepath.Ext(path), "."))
	if err := fileV.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, "", fmt.Errorf("config file %s is not valid (YAML, JSON or TOML with option names as keys): %w", path, err)
	}
	for _, key := range fileV.AllKeys() {
		dest := strings.ReplaceAll(key, "-", "_")
		if _, ok := SpecByDest(dest); !ok {
			return nil, "", &UsageError{Msg: fmt.Sprintf("config file %s: unknown key %q (keys are option names with underscores, e.g. kernel_trace)", path, key)}
		}
		v.Set("file."+dest, fileV.Get(key))
	}
	return v, path, nil
}

// envIsDefault says which ROCPROF_* variables are read as option defaults.
// Variables whose text format differs from the command line's (ranges and
// periods in nanoseconds) are only exported, never read back.
func envIsDefault(dest string) bool {
	switch dest {
	case "kernel_iteration_range", "collection_period":
		return false
	}
	return true
}

// envValue converts a ROCPROF_* value to the command line's words.
func envValue(dest, val string) any {
	switch dest {
	case "summary_groups":
		return strings.Split(val, "##@@##")
	case "preload":
		return strings.Split(val, ":")
	case "minimum_output_data":
		if n, err := strconv.Atoi(val); err == nil {
			return strconv.Itoa(n / 1024)
		}
	}
	return val
}

// fillFromViper gives unset options their environment or config-file value.
func fillFromViper(c *Config, v *viper.Viper) error {
	for i := range Specs {
		s := &Specs[i]
		if c.IsSet(s.Dest) {
			continue
		}
		for _, layer := range []string{"env.", "file."} {
			if !v.IsSet(layer + s.Dest) {
				continue
			}
			words, err := jobValueWords(s, v.Get(layer+s.Dest))
			if err != nil {
				return &UsageError{Option: s.Flag(), Msg: fmt.Sprintf("value from %s: %v", strings.TrimSuffix(layer, "."), err)}
			}
			for _, w := range words {
				if err := s.setValue(c, w); err != nil {
					origin := "the config file"
					if layer == "env." {
						origin = "environment variable " + s.Env
					}
					return &UsageError{Option: s.Flag(), Msg: fmt.Sprintf("value from %s: %v", origin, err)}
				}
			}
			c.markSet(s.Dest)
			break
		}
	}
	return nil
}

// checkSupported rejects options whose capability does not exist yet, so
// that nothing the user asked for is silently ignored.
func checkSupported(c *Config) error {
	for i := range Specs {
		s := &Specs[i]
		if s.NotSupported == "" || !c.IsSet(s.Dest) || !s.isActive(c) {
			continue
		}
		return &UsageError{Option: s.Flag(), Msg: "not supported yet: " + s.NotSupported}
	}
	return nil
}

// isActive reports whether a set option asks for something (a true [BOOL], a
// non-empty value).
func (s *Spec) isActive(c *Config) bool {
	switch p := s.Field(c).(type) {
	case *Tri:
		return p.On()
	case *string:
		return *p != ""
	case *int:
		return *p != 0
	case *uint64:
		return *p != 0
	case *[]string:
		return len(*p) > 0
	case *time.Duration:
		return *p > 0
	}
	return true
}

// checkCounterDefs fails a pass that needs counter definitions when
// $ROCPROFILER_METRICS_PATH names a directory without a readable
// counter_defs.yaml (rocprofiler-sdk stops there too); a pass that collects
// no counters never reads it.
func (c *Config) checkCounterDefs() error {
	if c.CounterDefs == "" || !c.CollectsCounters() && !c.AdvancedThreadTrace.On() && !c.ListAvail.On() {
		return nil
	}
	f, err := atomicfile.OpenInput(c.CounterDefs)
	if err != nil {
		return fmt.Errorf("%s=%s: %w: rocprof-go, as rocprofiler-sdk, reads the counter definitions from $%s/%s instead of its own; put the file there, or unset %s to use the built-in ones",
			MetricsPathEnv, filepath.Dir(c.CounterDefs), err, MetricsPathEnv, CounterDefsFileName, MetricsPathEnv)
	}
	return f.Close()
}
