package launch

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/options"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// SpoolDirEnv names the private directory where each profiled process writes
// its spool; the preload library records nothing when it is unset.
const SpoolDirEnv = toolenv.GoSpoolDir

// VGPUArchEnv selects the virtual GPU's architecture.
const VGPUArchEnv = "ROCPROF_VGPU_ARCH"

// AppEnv is the environment of one run of the app, and the part of it that
// rocprof-go added (for --echo and --log-level env).
type AppEnv struct {
	Full  []string
	Added map[string]string
}

// envSpec is what composeEnv needs to know about the libraries to inject.
type envSpec struct {
	base      []string // the environment rocprof-go itself received
	cfg       *options.Config
	outputDir string
	spoolDir  string
	preload   string // path of the preload library
	shim      string // path of the cgo shim, "" when the pass needs no HSA interception
	vgpu      string // path of the virtual GPU's library, "" for a real GPU
	roctx     string // legacy libroctx64 interposer to preload, "" when not needed
}

// composeEnv builds the app's environment: rocprofv3's ROCPROF_* variables,
// LD_PRELOAD (the virtual GPU when asked, user --preload libraries, the
// inherited list, then ours), HSA_TOOLS_LIB with the shim appended.
func composeEnv(s envSpec) *AppEnv {
	vars := map[string]string{}
	var order []string
	for _, kv := range s.base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, dup := vars[k]; !dup {
			order = append(order, k)
		}
		vars[k] = v
	}
	// A variable the injected code reads that a previous profiler run (or
	// the user) exported is rocprof-go's to set for the app: the resolved
	// configuration replaces it rather than leaving a stale "on" behind.
	for _, k := range toolenv.Replaced {
		delete(vars, k)
	}
	added := s.cfg.ToolEnv(s.outputDir)
	added[SpoolDirEnv] = s.spoolDir
	for _, f := range s.cfg.CounterFiles() {
		added[f.Env] = filepath.Join(s.spoolDir, f.Name) // written there by writeCounterFiles
	}
	if tsc := tscOnce(); tsc != "" {
		added[TSCEnv] = tsc
	}

	var preload []string
	if s.vgpu != "" {
		// First, so that its open/ioctl/mmap are the ones every library of
		// the process reaches: it plays the kernel's part for any ROCm.
		preload = append(preload, s.vgpu)
		added[VGPUArchEnv] = s.cfg.VirtualGPU
	}
	for _, p := range s.cfg.Preload {
		preload = append(preload, absoluteLibrary(p))
	}
	if cur := vars["LD_PRELOAD"]; cur != "" {
		preload = append(preload, strings.FieldsFunc(cur, func(r rune) bool { return r == ':' || r == ' ' })...)
	}
	preload = append(preload, s.preload)
	if s.roctx != "" {
		preload = append(preload, s.roctx)
	}
	added["LD_PRELOAD"] = strings.Join(preload, ":")

	// --rocm-root: the app loads that ROCm's libraries (checked when the
	// options were resolved).
	if dirs, _ := s.cfg.RocmLibDirs(); len(dirs) > 0 {
		if cur := vars["LD_LIBRARY_PATH"]; cur != "" {
			dirs = append(dirs, cur)
		}
		added["LD_LIBRARY_PATH"] = strings.Join(dirs, ":")
	}

	if s.shim != "" {
		tools := s.shim
		if cur := vars["HSA_TOOLS_LIB"]; cur != "" {
			tools = cur + " " + s.shim
		}
		added["HSA_TOOLS_LIB"] = tools
	}
	for k, v := range added {
		if _, dup := vars[k]; !dup {
			order = append(order, k)
		}
		vars[k] = v
	}
	full := make([]string, 0, len(vars))
	for _, k := range order {
		if v, ok := vars[k]; ok {
			full = append(full, k+"="+v)
		}
	}
	return &AppEnv{Full: full, Added: added}
}

// AddedLines renders the variables rocprof-go added, sorted, as NAME=value.
func (e *AppEnv) AddedLines() []string {
	keys := make([]string, 0, len(e.Added))
	for k := range e.Added {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + e.Added[k]
	}
	return out
}

// absoluteLibrary makes a --preload library given as a relative path
// absolute, against rocprof-go's directory, where the user typed it: a
// relative LD_PRELOAD entry is looked up again in each process's working
// directory, so a process of the app that changes directory would load
// whatever is found there under that name (issue 31). A bare name
// (libfoo.so) is left to the dynamic linker's search path.
func absoluteLibrary(p string) string {
	if !strings.Contains(p, "/") || filepath.IsAbs(p) {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
