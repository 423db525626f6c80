package pipeline

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/att"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/topology"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
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
	res, err := threadTraceDecode(dir, libDirs, ldLibraryPath, counters, time.Time{}, log)
	if res == nil {
		return nil, err
	}
	return res.Dispatches, err
}

func threadTraceDecode(dir string, libDirs []string, ldLibraryPath string, counters []string, since time.Time, log io.Writer) (*att.DirResult, error) {
	lib := att.Find(libDirs, ldLibraryPath)
	if lib == "" {
		return nil, fmt.Errorf("%s was not found (--att-library-path, ROCPROF_ATT_LIBRARY_PATH, LD_LIBRARY_PATH, /opt/rocm/lib)", att.LibraryName)
	}
	return att.DecodeDir(att.DirOptions{Dir: dir, Since: since, Library: lib, Counters: counters, Log: log})
}

// decodeThreadTraces runs after the app: for each thread-traced pass whose
// decoder is found, the raw traces are decoded as rocprofv3 does at the end
// of its run (only this run's raw files: an output directory can hold an
// earlier run's). When the decoder is missing the shim has already said
// where the raw files are; nothing is lost.
//
// It reports whether decoded files were added to the passes' file lists.
func decodeThreadTraces(res *runResult, started time.Time, environ []string, progress io.Writer) bool {
	if res == nil {
		return false
	}
	added := false
	ld, _ := lookupIn(environ)("LD_LIBRARY_PATH")
	for i := range res.Passes {
		p := &res.Passes[i]
		cfg := p.Config
		if cfg == nil || !cfg.AdvancedThreadTrace.On() {
			continue
		}
		var libDirs []string
		for _, d := range cfg.AttLibraryPath {
			libDirs = append(libDirs, strings.Split(d, ":")...)
		}
		if att.Find(libDirs, ld) == "" {
			raw := 0
			for _, f := range p.Files {
				if f.Domain == "thread_trace_raw" && strings.HasSuffix(f.Path, ".att") {
					raw++
				}
			}
			if raw > 0 {
				fmt.Fprintf(progress, "rocprof-go: thread trace: librocprof-trace-decoder.so was not found (--att-library-path, "+
					"LD_LIBRARY_PATH, /opt/rocm/lib): the %d raw .att files and their code objects are in %s for decoding later "+
					"(rocprof-go's ThreadTraceDecode, or --att-library-path naming the decoder's directory in the next run)\n", raw, p.Dir)
			}
			continue
		}
		var names []string
		if cs, _, err := cfg.ATTStreamedCounters(); err == nil { // listed as given, as rocprofv3 does
			for _, c := range cs {
				names = append(names, c.String())
			}
		}
		r, err := threadTraceDecode(p.Dir, libDirs, ld, names, started, progress)
		if err != nil {
			fmt.Fprintf(progress, "rocprof-go: thread trace: decoding %s: %v (the raw .att files are kept)\n", p.Dir, err)
		}
		if r == nil || len(r.Dispatches) == 0 {
			continue
		}
		// run.json lists each dispatch's stats CSV and code.json.
		for j, d := range r.Dispatches {
			p.Files = append(p.Files,
				model.File{Path: att.StatsName(d), Format: "csv", Domain: "thread_trace", Records: uint64(r.Rows[j])},
				model.File{Path: filepath.Join(d, "code.json"), Format: "json", Domain: "thread_trace", Records: uint64(r.Rows[j])})
		}
		added = true
		fmt.Fprintf(progress, "rocprof-go: thread trace: %d dispatch(es) decoded into %s\n", len(r.Dispatches), p.Dir)
	}
	return added
}

// attSpoolDir is where the shim leaves a pass's raw thread traces and code
// objects: beside the spools, in the run's private directory.
const attSpoolDir = "att"

// attFileName is a file the shim writes for thread trace, named after its
// process (<pid>_agent_..._shader_engine_..._<dispatch>.att,
// <pid>_agent_..._code_object_id_<id>.out, <pid>_att_code_objects.jsonl).
var attFileName = regexp.MustCompile(`^(\d+)_(?:agent_\d+_shader_engine_\d+_\d+\.att|agent_\d+_code_object_id_\d+\.out|att_code_objects\.jsonl)$`)

// placeThreadTraces writes the thread-trace files a pass's processes left in
// its spool directory into each process's output directory (dirTemplate's
// placeholders expanded for that process), as every output file is written:
// under a temporary name, renamed when complete, never through a link.
func placeThreadTraces(spoolDir, dirTemplate string, launchTime time.Time) ([]model.File, error) {
	src := filepath.Join(spoolDir, attSpoolDir)
	entries, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	procs := map[int]tracing.ProcessInfo{}
	if spools, err := tracing.List(spoolDir); err == nil {
		for _, p := range spools {
			if r, err := tracing.Open(p); err == nil {
				info := r.Process()
				procs[int(info.PID)] = info
				r.Close()
			}
		}
	}
	var files []model.File
	for _, e := range entries {
		m := attFileName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		info, ok := procs[pid]
		if !ok {
			info = tracing.ProcessInfo{PID: int32(pid)}
		}
		dir := placeholder.Expand(dirTemplate, processPlaceholders(info, launchTime))
		if err := atomicfile.MkdirAll(dir, 0o755); err != nil {
			return files, err
		}
		dst := filepath.Join(dir, e.Name())
		in, err := os.OpenFile(filepath.Join(src, e.Name()), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return files, err
		}
		err = atomicfile.Write(dst, atomicfile.Public, func(w io.Writer) error {
			_, err := io.Copy(w, in)
			return err
		})
		in.Close()
		if err != nil {
			return files, err
		}
		format := strings.TrimPrefix(filepath.Ext(e.Name()), ".")
		files = append(files, model.File{Path: dst, Format: model.Format(format), Domain: "thread_trace_raw"})
	}
	return files, os.RemoveAll(src)
}
