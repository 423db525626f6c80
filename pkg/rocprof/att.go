package rocprof

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/att"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// validateATT checks what needs the agents: --att-gpu-index must name GPUs
// that exist (rocprofv3 refuses, e.g., 9999).
func validateATT(plan *options.Plan, agents []topology.Agent, agentErr error) error {
	for _, p := range plan.Passes {
		if !p.AdvancedThreadTrace.On() || strings.TrimSpace(p.AttGpuIndex) == "" || agentErr != nil {
			continue
		}
		for _, f := range strings.Split(p.AttGpuIndex, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 {
				return &options.UsageError{Option: "--att-gpu-index", Msg: fmt.Sprintf("%q is not a GPU index", f)}
			}
			if i >= len(agents) {
				return &options.UsageError{Option: "--att-gpu-index",
					Msg: fmt.Sprintf("GPU %d does not exist: this machine has %d GPU(s), 0..%d", i, len(agents), len(agents)-1)}
			}
		}
	}
	return nil
}

// ThreadTraceDecode decodes the raw thread traces a run left in dir with the
// decoder found in libDirs (then LD_LIBRARY_PATH, /opt/rocm/lib), writing
// rocprofv3's ui_output_agent_<agent>_dispatch_<id>/ directories and
// stats_*.csv next to the raw files. counters are --att-perfcounters'
// names, listed in filenames.json. It returns the decoded directories.
func ThreadTraceDecode(dir string, libDirs []string, ldLibraryPath string, counters []string, log io.Writer) ([]string, error) {
	lib := att.Find(libDirs, ldLibraryPath)
	if lib == "" {
		return nil, fmt.Errorf("%s was not found (--att-library-path, ROCPROF_ATT_LIBRARY_PATH, LD_LIBRARY_PATH, /opt/rocm/lib)", att.LibraryName)
	}
	res, err := att.DecodeDir(att.DirOptions{Dir: dir, Library: lib, Counters: counters, Log: log})
	if res == nil {
		return nil, err
	}
	return res.Dispatches, err
}

// decodeThreadTraces runs after the app: for each thread-traced pass whose
// decoder is found, the raw traces are decoded as rocprofv3 does at the end
// of its run. When the decoder is missing the shim has already said where
// the raw files are; nothing is lost.
func decodeThreadTraces(res *launch.Result, environ []string, progress io.Writer) {
	if res == nil {
		return
	}
	ld, _ := lookupIn(environ)("LD_LIBRARY_PATH")
	for _, p := range res.Passes {
		cfg := p.Config
		if cfg == nil || !cfg.AdvancedThreadTrace.On() {
			continue
		}
		var libDirs []string
		for _, d := range cfg.AttLibraryPath {
			libDirs = append(libDirs, strings.Split(d, ":")...)
		}
		if att.Find(libDirs, ld) == "" {
			continue
		}
		var names []string
		if cs, period, err := cfg.ATTStreamedCounters(); err == nil && period > 0 {
			for _, c := range cs {
				names = append(names, c.String())
			}
		}
		dirs, err := ThreadTraceDecode(p.Dir, libDirs, ld, names, progress)
		if err != nil {
			fmt.Fprintf(progress, "rocprof-go: thread trace: decoding %s: %v (the raw .att files are kept)\n", p.Dir, err)
		}
		if len(dirs) > 0 {
			fmt.Fprintf(progress, "rocprof-go: thread trace: %d dispatch(es) decoded into %s\n", len(dirs), p.Dir)
		}
	}
}
