package rocmlibs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"

	"github.com/rocprof-go/rocprof-go/internal/kernelname"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// RCCL's kernels (NCCL 2.13's ncclKernel_<first function> in RCCL 5.4,
// ncclDevKernel_Generic in RCCL 7) go through hipExtLaunchKernel.
var rcclKernels = launcher{regexp.MustCompile(`^nccl(Dev)?Kernel`), []string{"hipExtLaunchKernel", "hipLaunchKernel"}}

// auditLibrary compiles test/rocmlibs/testdata/rccl_calls_audit.c, the
// LD_AUDIT library that counts the RCCL calls of a program's main
// executable, into dir.
func auditLibrary(t *testing.T, dir string) string {
	lib := filepath.Join(dir, "rccl_calls_audit.so")
	out, err := exec.Command("gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", lib,
		filepath.Join(testsys.RepoRoot(t), "test", "rocmlibs", "testdata", "rccl_calls_audit.c")).CombinedOutput()
	require.NoError(t, err, "building the LD_AUDIT library: %s", out)
	return lib
}

// auditCounts reads the calls the audit library counted, by function.
func auditCounts(t *testing.T, dir string) map[string]int {
	paths, err := filepath.Glob(filepath.Join(dir, "*.calls"))
	require.NoError(t, err)
	require.Len(t, paths, 1, "one process made RCCL calls")
	f, err := os.Open(paths[0])
	require.NoError(t, err)
	defer f.Close()
	m := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, n, ok := strings.Cut(sc.Text(), " ")
		require.True(t, ok, sc.Text())
		c, err := strconv.Atoi(n)
		require.NoError(t, err)
		m[name] = c
	}
	require.NoError(t, sc.Err())
	return m
}

// spooled is what the kept spool of the RCCL program holds.
type spooled struct {
	pid        int32
	names      map[uint32]string // the RCCL_API string table
	rccl       []tracing.RCCLCall
	hip        map[uint64]tracing.APICall // HIP calls by correlation id
	dispatches []tracing.KernelDispatch
	kernels    map[uint64]string // kernel id -> demangled name
}

func readSpool(t *testing.T, dir string) spooled {
	paths, err := tracing.List(filepath.Join(dir, "pass_1"))
	require.NoError(t, err)
	require.Len(t, paths, 1, "one profiled process")
	r, err := tracing.Open(paths[0])
	require.NoError(t, err)
	defer r.Close()
	s := spooled{pid: r.Process().PID, names: map[uint32]string{}, hip: map[uint64]tracing.APICall{},
		kernels: map[uint64]string{}}
	for r.Next() {
		switch r.Kind() {
		case tracing.KindString:
			if v := r.String(); v.Table == uint32(tracing.DomainRCCL) {
				s.names[uint32(v.ID)] = string(v.Value)
			}
		case tracing.KindRCCLAPI:
			c := r.RCCLCall()
			c.APICall.Args = append([]byte(nil), c.APICall.Args...) // outlives the mapping
			for i, a := range c.Args {
				c.Args[i] = append([]byte(nil), a...)
			}
			s.rccl = append(s.rccl, c)
		case tracing.KindHIPAPI:
			a := r.APICall()
			a.Args = nil
			s.hip[a.CorrelationID] = a
		case tracing.KindKernelDispatch:
			s.dispatches = append(s.dispatches, r.KernelDispatch())
		case tracing.KindKernelSymbol:
			k := r.KernelSymbol()
			s.kernels[k.KernelID] = kernelname.Format(strings.TrimSuffix(string(k.Name), ".kd"), false, false)
		}
	}
	st := r.Stats()
	require.Zero(t, st.Torn+st.Invalid+r.Process().Dropped, "records lost: %+v", st)
	return s
}

// On every runtime with RCCL, all_reduce_perf (rccl-tests, built in the
// root) on two and four virtual GPUs, one thread, validation off (-c 0:
// kernels do not compute here): it finishes under the profiler as without;
// the trace holds every kernel of every GPU, RCCL's under their names and
// launched by hipExtLaunchKernel; and the spool (--sys-trace implies
// --rccl-trace) holds exactly the RCCL calls the program made, counted
// independently by an LD_AUDIT library from its PLT, each on the program's
// thread, and every RCCL kernel's HIP launch lies inside the ncclGroupEnd
// that launched it.
func TestRCCLAllReduce(t *testing.T) {
	for _, rt := range runtimesWith(t, "librccl1") {
		for _, gpus := range []int{2, 4} {
			t.Run(rt.Name+"/gpus="+strconv.Itoa(gpus), func(t *testing.T) {
				app := filepath.Join(rt.Apps, "all_reduce_perf")
				require.FileExists(t, app, "build it: `make rocm-testapps` (mk/rocmlibs.mk)")
				// 1 MiB of floats, one warm-up and five timed iterations,
				// each out of place and in place.
				p := program{rt: rt, arch: "gfx90a", gpus: gpus,
					argv: []string{app, "-g", strconv.Itoa(gpus), "-c", "0", "-b", "1M", "-e", "1M", "-n", "5", "-w", "1"}}
				bare := p.bare(t)
				audit := tempDir(t, &p.rt)
				prof := p.profiled(t, "LD_AUDIT="+auditLibrary(t, audit), "RCCL_CALLS_AUDIT_DIR="+audit)
				sameOutcome(t, bare, prof, regexp.MustCompile(`(?m)^\s+1048576\s+262144\s+float\s+sum\s+-1\s`))
				require.Contains(t, prof.stdout, "# Out of bounds values : 0 OK")
				names, _ := checkKernels(t, prof, rcclKernels)
				rcclDispatches := count(names, rcclKernels.re)

				sp := readSpool(t, prof.spools)
				// The function names, as rocprofv3 numbers them.
				require.Len(t, sp.names, len(tracing.RCCLFunctions))
				for id, f := range tracing.RCCLFunctions {
					require.Equal(t, f.Name, sp.names[uint32(id)])
				}
				// Exactly the program's calls.
				calls := map[string]int{}
				for _, c := range sp.rccl {
					calls[c.Name()]++
					require.Equal(t, uint32(sp.pid), c.TID, "%s on the program's one thread", c.Name())
					require.LessOrEqual(t, c.Start, c.End)
					require.Greater(t, c.EndCorrelationID, c.CorrelationID)
				}
				require.Equal(t, auditCounts(t, audit), calls, "RCCL calls in the spool against the program's PLT calls")
				// ... and the rows of rccl_api_trace.csv (rocprofv3's file
				// and columns), with their stats.
				rows := map[string]int{}
				for _, r := range readCSV(t, prof.out, "rccl_api_trace") {
					require.Equal(t, "RCCL_API", r["Domain"])
					rows[r["Function"]]++
				}
				require.Equal(t, auditCounts(t, audit), rows, "rows of rccl_api_trace.csv against the program's PLT calls")
				require.NotEmpty(t, readCSV(t, prof.out, "rccl_api_stats"))
				groups := calls["ncclGroupEnd"]
				require.Equal(t, gpus*groups, calls["ncclAllReduce"], "one ncclAllReduce per GPU in each group")
				require.Equal(t, gpus*groups, rcclDispatches, "one RCCL kernel per GPU for each group")
				for _, c := range sp.rccl {
					if c.Name() == "ncclAllReduce" {
						// count (floats) and datatype (ncclFloat32 = 7) as passed
						require.Equal(t, uint64(262144), le64(c.Arg("count")))
						require.Equal(t, uint64(7), le64(c.Arg("datatype")))
					}
				}

				// Each RCCL kernel: its HIP launch was made inside an
				// ncclGroupEnd, on the same thread, within its times.
				seen := 0
				for _, d := range sp.dispatches {
					if !rcclKernels.re.MatchString(sp.kernels[d.KernelID]) {
						continue
					}
					h, ok := sp.hip[d.CorrelationID]
					require.True(t, ok, "an RCCL kernel's correlation id %d is a HIP call", d.CorrelationID)
					var owner *tracing.RCCLCall
					for i := range sp.rccl {
						if sp.rccl[i].Encloses(h.TID, h.CorrelationID) {
							owner = &sp.rccl[i]
						}
					}
					require.NotNil(t, owner, "the HIP launch (id %d) of an RCCL kernel lies inside an RCCL call", h.CorrelationID)
					require.Equal(t, "ncclGroupEnd", owner.Name())
					require.True(t, owner.Start <= h.Start && h.End <= owner.End, "the launch within the call's times")
					seen++
				}
				require.Equal(t, rcclDispatches, seen, "every RCCL kernel traced to its RCCL call")
			})
		}
	}
}

func le64(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
