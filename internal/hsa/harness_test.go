package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// buildDir is where make put the libraries and test apps: the Makefile
// exports ROCPROF_GO_BUILD; a plain `go test` falls back to <repo>/build.
func buildDir(t testing.TB) string {
	if d := os.Getenv("ROCPROF_GO_BUILD"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "build")
		}
	}
	t.Fatalf("no go.mod above %s", wd)
	return ""
}

// artifact returns a built file, failing with the make target to run.
func artifact(t testing.TB, rel string) string {
	p := filepath.Join(buildDir(t), rel)
	_, err := os.Stat(p)
	require.NoError(t, err, "missing %s: run `make shim shim-apps preload vgpu`", p)
	return p
}

// run is one run of a test app on the virtual GPU.
type run struct {
	exitCode int
	signaled bool
	stdout   string
	stderr   string
	spools   string
}

// vgpuPreload is LD_PRELOAD for an app on the virtual GPU: its library
// first (it stands in for the kernel), then the given libraries.
func vgpuPreload(t testing.TB, libs ...string) string {
	return "LD_PRELOAD=" + strings.Join(append([]string{artifact(t, "vgpu/librocprof-go-vgpu.so")}, libs...), ":")
}

// appEnv is the environment of an app run: virtual GPU, and unless bare the
// preload library, the shim and the given ROCPROF_* variables.
func appEnv(t testing.TB, spools string, bare bool, vars ...string) []string {
	env := os.Environ()
	if bare {
		// The virtual GPU's own settings (ROCPROF_VGPU_*) apply to bare runs
		// too: they describe the machine, not the profiler.
		env = append(env, vgpuPreload(t))
		for _, v := range vars {
			if strings.HasPrefix(v, "ROCPROF_VGPU_") {
				env = append(env, v)
			}
		}
		return env
	}
	env = append(env,
		vgpuPreload(t, artifact(t, "lib/librocprof-go-preload.so")),
		"HSA_TOOLS_LIB="+artifact(t, "lib/librocprof-go-shim.so"),
		"HSA_TOOLS_REPORT_LOAD_FAILURE=1",
		"ROCPROF_GO_SPOOL_DIR="+spools)
	return append(env, vars...)
}

// runApp runs build/test/shim/<app> under the profiler with the given
// ROCPROF_* variables ("ROCPROF_KERNEL_TRACE=1", ...).
func runApp(t testing.TB, vars []string, app string, args ...string) run {
	return runBuilt(t, vars, "test/shim/"+app, args...)
}

// runBuilt runs a program of the build directory under the profiler.
func runBuilt(t testing.TB, vars []string, rel string, args ...string) run {
	spools := t.TempDir()
	cmd := exec.Command(artifact(t, rel), args...)
	cmd.Env = appEnv(t, spools, false, vars...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String(), spools: spools}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.exitCode = ee.ExitCode()
		r.signaled = ee.ExitCode() < 0
	} else {
		require.NoError(t, err, "stderr: %s", errb.String())
	}
	return r
}

// records is everything the spools of one run hold.
type records struct {
	strings    map[uint32]map[uint64]string
	api        []tracing.APICall
	hip        []tracing.APICall
	dispatches []tracing.KernelDispatch
	copies     []tracing.MemoryCopy
	allocs     []tracing.MemoryAllocation
	scratch    []tracing.ScratchMemory
	symbols    map[uint64]tracing.KernelSymbol
	codeObjs   []tracing.CodeObject
	agents     []tracing.AgentInfo
	torn       uint64
}

func readSpools(t testing.TB, dir string) records {
	paths, err := tracing.List(dir)
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no spool in %s", dir)
	rs := records{strings: map[uint32]map[uint64]string{}, symbols: map[uint64]tracing.KernelSymbol{}}
	for _, p := range paths {
		r, err := tracing.Open(p)
		require.NoError(t, err)
		for r.Next() {
			switch r.Kind() {
			case tracing.KindString:
				s := r.String()
				if rs.strings[s.Table] == nil {
					rs.strings[s.Table] = map[uint64]string{}
				}
				rs.strings[s.Table][s.ID] = string(s.Value)
			case tracing.KindHSAAPI:
				a := r.APICall()
				a.Args = append([]byte(nil), a.Args...)
				rs.api = append(rs.api, a)
			case tracing.KindHIPAPI:
				rs.hip = append(rs.hip, r.APICall())
			case tracing.KindKernelDispatch:
				rs.dispatches = append(rs.dispatches, r.KernelDispatch())
			case tracing.KindMemoryCopy:
				rs.copies = append(rs.copies, r.MemoryCopy())
			case tracing.KindMemoryAllocation:
				rs.allocs = append(rs.allocs, r.MemoryAllocation())
			case tracing.KindScratchMemory:
				rs.scratch = append(rs.scratch, r.ScratchMemory())
			case tracing.KindKernelSymbol:
				s := r.KernelSymbol()
				s.Name = append([]byte(nil), s.Name...)
				rs.symbols[s.KernelID] = s
			case tracing.KindCodeObject:
				c := r.CodeObject()
				c.URI = append([]byte(nil), c.URI...)
				rs.codeObjs = append(rs.codeObjs, c)
			case tracing.KindAgentInfo:
				rs.agents = append(rs.agents, r.AgentInfo())
			}
		}
		st := r.Stats()
		rs.torn += st.Torn
		require.NoError(t, r.Close())
	}
	return rs
}

// kernelName is the mangled name of a dispatch's kernel ("" if unknown).
func (rs records) kernelName(d tracing.KernelDispatch) string {
	return string(rs.symbols[d.KernelID].Name)
}
