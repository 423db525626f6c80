package launch

import (
	"path/filepath"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

// AttachPass is a pass whose processes were running before rocprof-go
// (--attach PID, internal/attach): the run's private directory, the pass's
// spool directory and the variables the launcher would have put in the
// app's environment are made as for a pass RunPass starts, but nothing is
// started; internal/attach hands the variables to the processes it loads
// the preload library into. Once every process detached, Attached makes it
// a Pass whose outputs are written as a launched pass's are.
type AttachPass struct {
	N        int
	Config   *options.Config
	SpoolDir string
	// Lib is the verified preload library the processes load.
	Lib string
	// Env are the configuration's variables (the ROCPROF_* contract), as
	// RunPass would add them to the app's environment, less what only a
	// starting process reads (LD_PRELOAD, HSA_TOOLS_LIB, the library path,
	// the virtual GPU, the notes descriptor).
	Env map[string]string
	run *Run
}

// AttachFiles are the files of an attach in the run's private directory:
// the configuration the processes read and the socket they report on. A
// killed rocprof-go's run directory holding only these (and empty pass
// directories) is removed by the next run (removeDeadRun).
var AttachFiles = []string{"attach.conf", "attach.sock", "attach.pmc"}

// startOnly are the variables of a pass's environment that a process reads
// only when it starts.
var startOnly = []string{"LD_PRELOAD", "HSA_TOOLS_LIB", "LD_LIBRARY_PATH", VGPUArchEnv, NotesEnv}

// PrepareAttach makes pass n's spool directory (with its counter files) and
// variables for processes that are already running.
func (run *Run) PrepareAttach(n int, cfg *options.Config) (*AttachPass, error) {
	spoolDir, err := run.beginPass(n, cfg)
	if err != nil {
		return nil, err
	}
	r := run.r
	vars, err := r.AttachEnv(cfg, spoolDir)
	if err != nil {
		return nil, err
	}
	lib, err := r.Libs.Path(PreloadLib)
	if err != nil {
		return nil, err
	}
	// Right before the processes get the path: still the run's own directory.
	if err := run.dir.Verify(); err != nil {
		return nil, err
	}
	return &AttachPass{N: n, Config: cfg, SpoolDir: spoolDir, Lib: lib, Env: vars, run: run}, nil
}

// AttachEnv is the configuration an attach hands the processes for cfg
// (--echo shows it): the variables Prepare adds to a launched app's
// environment, less what a process reads only when it starts.
func (r *Runner) AttachEnv(cfg *options.Config, spoolDir string) (map[string]string, error) {
	env, err := r.Prepare(cfg, spoolDir)
	if err != nil {
		return nil, err
	}
	vars := make(map[string]string, len(env.Added))
	for k, v := range env.Added {
		vars[k] = v
	}
	for _, k := range startOnly {
		delete(vars, k)
	}
	return vars, nil
}

// RunDir is the run's private directory (0700, this user's), where the
// attach's configuration and socket go.
func (p *AttachPass) RunDir() string { return p.run.dir.Path() }

// WriteFile creates name in the run's private directory (O_EXCL, no link
// followed) with data, mode 0600, and returns its path.
func (p *AttachPass) WriteFile(name string, data []byte) (string, error) {
	if err := p.run.dir.WriteFile(name, data, 0o600); err != nil {
		return "", err
	}
	return filepath.Join(p.run.dir.Path(), name), nil
}

// Attached makes the pass a Pass once every process detached (or exited):
// proc says how long the attach lasted. Signals are the outputs' from
// here on (OutputGuard), as after a launched app exited.
func (p *AttachPass) Attached(proc *ProcessResult) *Pass {
	run := p.run
	run.r.Guard.setActive(true)
	if proc == nil {
		proc = &ProcessResult{}
	}
	added := make(map[string]string, len(p.Env))
	for k, v := range p.Env {
		added[k] = v
	}
	return &Pass{N: p.N, Config: p.Config, Dir: PassDir(p.Config), SpoolDir: p.SpoolDir,
		Env: &AppEnv{Added: added}, Process: proc, run: run}
}

// RemoveFiles removes the attach's files from the run directory once
// every process detached.
func (p *AttachPass) RemoveFiles() {
	for _, n := range AttachFiles {
		_ = p.run.dir.Remove(n)
	}
}
