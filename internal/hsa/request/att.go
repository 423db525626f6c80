package request

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/aql"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// ATT is the thread-trace request (--att and its parameters).
type ATT struct {
	Config       aql.ATTConfig
	GPUs         map[int]bool // --att-gpu-index; nil: every GPU
	OutDir       string       // where the shim leaves the raw files (beside the spools)
	SerializeAll bool         // --att-serialize-all
	Perf         []ATTPerf    // --att-perfcounters / --att-activity
	PerfPeriod   uint32       // --att-perfcounter-ctrl (0: no counters)
}

// ATTPerf is one streamed counter as the CLI exports it.
type ATTPerf struct {
	Name string
	Mask uint32 // SIMDs
}

// ParseATT reads ROCPROF_ADVANCED_THREAD_TRACE and the
// ROCPROF_ATT_PARAM_* values (nil when thread trace is off).
func ParseATT(getenv func(string) string) (*ATT, error) {
	if getenv(toolenv.AdvancedThreadTrace) != "1" {
		return nil, nil
	}
	// The raw traces and code objects go to the pass's private spool
	// directory, beside the spools: the CLI places them in the output
	// directory after the run, as it writes every other output file
	// (internal/pipeline). Without rocprof-go's launcher (the shim loaded
	// by hand), the output path is used directly.
	r := &ATT{Config: aql.RocprofATTConfig(), OutDir: getenv(toolenv.OutputPath)}
	if spool := getenv(toolenv.GoSpoolDir); spool != "" {
		r.OutDir = filepath.Join(spool, "att")
	}
	if r.OutDir == "" {
		r.OutDir = "."
	}

	for _, p := range []struct {
		env   string
		param aql.ATTParam
	}{
		{toolenv.ATTParamTargetCU, aql.ATTComputeUnitTarget},
		{toolenv.ATTParamSIMDSelect, aql.ATTSIMDSelection},
		{toolenv.ATTParamBufferSize, aql.ATTBufferSize},
		{toolenv.ATTParamShaderEngineMask, aql.ATTSEMask},
	} {
		s := strings.TrimSpace(getenv(p.env))
		if s == "" {
			continue
		}
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q is not a number", p.env, s)
		}
		if err := r.Config.Apply(p.param, v); err != nil {
			return nil, fmt.Errorf("%s: %w", p.env, err)
		}
	}
	switch strings.ToLower(strings.TrimSpace(getenv(toolenv.ATTParamSerializeAll))) {
	case "1", "true", "yes", "on":
		r.SerializeAll = true
	}
	for _, f := range strings.FieldsFunc(getenv(toolenv.ATTParamPerfcounters), func(c rune) bool { return c == ' ' || c == ',' }) {
		name, m, hasMask := strings.Cut(f, ":")
		p := ATTPerf{Name: strings.ToUpper(name), Mask: 0xF}
		if hasMask {
			v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(m), "0x"), 16, 32)
			if err != nil || v == 0 || v > 0xF {
				return nil, fmt.Errorf("ROCPROF_ATT_PARAM_PERFCOUNTERS: %s: SIMD mask %q must be a hex value 1..f", p.Name, m)
			}
			p.Mask = uint32(v)
		}
		r.Perf = append(r.Perf, p)
	}
	if len(r.Perf) > aql.MaxATTPerfCounters {
		return nil, fmt.Errorf("ROCPROF_ATT_PARAM_PERFCOUNTERS: %d counters; a thread trace streams at most %d", len(r.Perf), aql.MaxATTPerfCounters)
	}
	if s := strings.TrimSpace(getenv(toolenv.ATTParamPerfcounterCtrl)); s != "" {
		v, err := strconv.ParseUint(s, 0, 32)
		if err != nil || v > 32 {
			return nil, fmt.Errorf("ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL=%q must be 1..32", s)
		}
		r.PerfPeriod = uint32(v)
	}
	if s := strings.TrimSpace(getenv(toolenv.ATTParamGPUIndex)); s != "" {
		r.GPUs = map[int]bool{}
		for _, f := range strings.Split(s, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("ROCPROF_ATT_PARAM_GPU_INDEX=%q: %q is not a GPU index", s, f)
			}
			r.GPUs[i] = true
		}
	}
	return r, nil
}
