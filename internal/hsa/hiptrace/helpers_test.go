package hiptrace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// buildDir is where make put the libraries and sample apps:
// $ROCPROF_GO_BUILD, else <repo>/build.
func buildDir(t testing.TB) string {
	if d := os.Getenv("ROCPROF_GO_BUILD"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "build")
}

// artifact returns the path of a build product and fails with the make
// target to run when it is missing.
func artifact(t testing.TB, rel string) string {
	p := filepath.Join(buildDir(t), rel)
	_, err := os.Stat(p)
	require.NoError(t, err, "%s is missing: run `make build test-prereqs` (or `make hip-apps roctx preload`)", p)
	return p
}

// traced describes one run of a sample app.
type run struct {
	app     string   // path under the build directory
	args    []string // app arguments
	env     []string // extra NAME=value
	preload bool     // LD_PRELOAD the preload library
	shim    bool     // load the HSA shim (HSA_TOOLS_LIB) too
}

// exec runs the app on the virtual GPU and returns its stdout and the spool
// directory.
func (r run) exec(t testing.TB) (string, string) { return r.execIn(t, t.TempDir()) }

// execIn is exec with the spools written into dir.
func (r run) execIn(t testing.TB, spools string) (string, string) {
	cmd := exec.Command(artifact(t, r.app), r.args...)
	preload := artifact(t, "vgpu/librocprof-go-vgpu.so")
	if r.preload {
		preload += ":" + artifact(t, "lib/librocprof-go-preload.so")
	}
	env := append(os.Environ(), "LD_PRELOAD="+preload, "ROCPROF_GO_SPOOL_DIR="+spools)
	if r.shim {
		env = append(env, "HSA_TOOLS_LIB="+artifact(t, "lib/librocprof-go-shim.so"))
	}
	cmd.Env = append(env, r.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "%s: %s", r.app, errb.String())
	return out.String(), spools
}

// marker is a decoded marker record whose message outlives the spool.
type marker struct {
	tracing.Marker
	Msg string
}

// trace is everything of interest read back from a run's spools.
type trace struct {
	pids       []int32
	names      map[tracing.APIDomain]map[uint32]string
	calls      []tracing.APICall
	markers    []marker
	dispatches []tracing.KernelDispatch
	copies     []tracing.MemoryCopy
	dropped    uint64
	torn       uint64
}

// name returns the function name of an API call from the spool's tables.
func (tr *trace) name(c tracing.APICall) string { return tr.names[c.Domain][c.Function] }

// count returns the number of calls per function name in one domain.
func (tr *trace) count(d tracing.APIDomain) map[string]int {
	m := map[string]int{}
	for _, c := range tr.calls {
		if c.Domain == d {
			m[tr.name(c)]++
		}
	}
	return m
}

func readTrace(t testing.TB, dir string) *trace {
	paths, err := filepath.Glob(filepath.Join(dir, "*.spool"))
	require.NoError(t, err)
	tr := &trace{names: map[tracing.APIDomain]map[uint32]string{}}
	for _, p := range paths {
		r, err := tracing.Open(p)
		require.NoError(t, err)
		info := r.Process()
		tr.pids = append(tr.pids, info.PID)
		tr.dropped += info.Dropped
		for r.Next() {
			switch r.Kind() {
			case tracing.KindString:
				s := r.String()
				if s.Table >= tracing.TableCounter {
					continue // status notes, streams, host functions: not function-name tables
				}
				d := tracing.APIDomain(s.Table)
				if tr.names[d] == nil {
					tr.names[d] = map[uint32]string{}
				}
				tr.names[d][uint32(s.ID)] = string(s.Value)
			case tracing.KindHIPAPI:
				c := r.APICall()
				c.Args = append([]byte(nil), c.Args...) // outlive the mapping
				tr.calls = append(tr.calls, c)
			case tracing.KindKernelDispatch:
				tr.dispatches = append(tr.dispatches, r.KernelDispatch())
			case tracing.KindMemoryCopy:
				tr.copies = append(tr.copies, r.MemoryCopy())
			case tracing.KindMarker:
				m := r.Marker()
				tr.markers = append(tr.markers, marker{Marker: m, Msg: string(m.Message)})
				tr.markers[len(tr.markers)-1].Message = nil
			}
		}
		st := r.Stats()
		tr.torn += st.Torn
		require.NoError(t, r.Close())
	}
	return tr
}
