package main

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/toolenv"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// tableLine is attach_table.c's debug line for one table it found: where its
// slots are, how many, how many it wrapped, and the FNV-1a hash of the slots
// as it found them.
var tableLine = regexp.MustCompile(`rocprof-go attach: HSA table (\S+) at 0x([0-9a-f]+)(?: major \d+)? slots (\d+)(?: wrapped (\d+))? fnv 0x([0-9a-f]+)`)

type foundTable struct {
	name          string
	addr, n, hash uint64
	wrapped       uint64
}

func foundTables(t *testing.T, stderr string) []foundTable {
	var out []foundTable
	for _, m := range tableLine.FindAllStringSubmatch(stderr, -1) {
		addr, _ := strconv.ParseUint(m[2], 16, 64)
		n, _ := strconv.ParseUint(m[3], 10, 64)
		w, _ := strconv.ParseUint(m[4], 10, 64)
		h, _ := strconv.ParseUint(m[5], 16, 64)
		out = append(out, foundTable{m[1], addr, n, h, w})
	}
	return out
}

// slotsHash reads a table's slots from the process's memory.
func slotsHash(t *testing.T, pid int, tb foundTable) uint64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, tb.n*8)
	_, err = f.ReadAt(b, int64(tb.addr))
	require.NoError(t, err)
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// While attached, HSA API calls, allocations and scratch memory are
// recorded through the runtime's own HSA API table (attach_table.c), on every
// runtime of the matrix: the table is found in the running process, its
// slots are wrapped (the process's memory shows them changed while
// attached) and given back exactly at the detach (the slots hash as they were
// found); the app's calls of the window are HSA_API records named as in
// launch mode, with sane times, the profiler's own calls (the control
// thread's polls) are not among them; the app's pool and region allocations
// and frees are MEMORY_ALLOCATION records on the GPU's node; a dispatch that
// needs scratch gives SCRATCH_MEMORY records on ROCR 6.1 and later, and the
// domain is noted unavailable on 5.2, which has no tools table. After the
// detach nothing more is recorded and the app runs on to its own output.
func TestAttachTracesHSAThroughTheRuntimesTable(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		a := startAttachedConf(t, ctx, rt, []string{
			toolenv.HSACoreAPITrace + "=1", toolenv.HSAAMDExtAPITrace + "=1",
			toolenv.HSAImageExtAPITrace + "=1", toolenv.HSAFinalizerExtAPITrace + "=1",
			toolenv.MemoryAllocationTrace + "=1", toolenv.ScratchMemoryTrace + "=1",
			toolenv.GoShimDebug + "=1",
		})
		// Printed before "ready"; the pipe's copy may lag.
		require.Eventually(t, func() bool { return len(foundTables(t, a.stderr.String())) >= 2 },
			10*time.Second, 10*time.Millisecond, "stderr: %s", a.stderr.String())
		tabs := foundTables(t, a.stderr.String())
		names := map[string]bool{}
		for _, tb := range tabs {
			names[tb.name] = true
			require.NotZero(t, tb.n, "%+v", tb)
		}
		require.True(t, names["0"] && names["1"] && names["2"], "core, AMD and image tables found: %+v; stderr: %s", tabs, a.stderr.String())
		scratchTraced := rt.Name != "5.2"
		require.Equal(t, scratchTraced, names["tools"], "tools table: %+v", tabs)
		for _, tb := range tabs {
			if tb.name == "0" || tb.name == "1" || tb.name == "tools" {
				require.NotEqual(t, tb.hash, slotsHash(t, a.pid, tb), "table %s's slots unchanged while attached", tb.name)
			}
		}

		a.do("run 4 2", "ran 4")
		a.do("alloc", "alloced")
		a.do("scratch 4096", "scratched")
		lost := a.detach()
		for _, tb := range tabs {
			require.Equal(t, tb.hash, slotsHash(t, a.pid, tb), "table %s's slots not as found after the detach; stderr: %s", tb.name, a.stderr.String())
		}
		a.do("run 2 0", "ran 2")
		a.do("alloc", "alloced")
		a.do("quit", "bye")
		require.NoError(t, a.wait())

		rs := readSpools(t, a.spools)
		require.Zero(t, rs.torn)
		counts := map[string]int{}
		attachedAt := rs.codeObjs[0].Timestamp
		var last uint64
		for _, c := range rs.api {
			name := rs.strings[uint32(c.Domain)][uint64(c.Function)]
			require.NotEmpty(t, name, "an HSA call without its name: %+v", c)
			require.Contains(t, []tracing.APIDomain{tracing.DomainHSACore, tracing.DomainHSAAMDExt}, c.Domain, "%s", name)
			require.True(t, c.Start > 0 && c.End >= c.Start && c.End-c.Start < uint64(10*time.Second), "%s: %+v", name, c)
			require.Greater(t, c.Start, attachedAt, "%s from before the attach: %+v", name, c)
			require.NotZero(t, c.CorrelationID, "%s", name)
			require.Equal(t, uint32(a.pid), c.TID, "%s on another thread than the app's: %+v", name, c)
			counts[name]++
			last = max(last, c.End)
		}
		// run 4 2: 4 reservations and doorbells, 2 waits (and resets of
		// the app's signal); scratch: 1 more dispatch, waited.
		require.Equal(t, 5, counts["hsa_queue_add_write_index_screlease"], "%v", counts)
		require.Equal(t, 5+3, counts["hsa_signal_store_screlease"], "doorbells and resets: %v", counts)
		require.GreaterOrEqual(t, counts["hsa_signal_wait_scacquire"], 3, "%v", counts)
		require.Equal(t, 1, counts["hsa_amd_memory_pool_allocate"], "%v", counts)
		require.Equal(t, 1, counts["hsa_amd_memory_pool_free"], "%v", counts)
		require.Equal(t, 1, counts["hsa_memory_allocate"], "%v", counts)
		require.Equal(t, 1, counts["hsa_memory_free"], "%v", counts)
		require.Equal(t, 1, counts["hsa_amd_agent_iterate_memory_pools"], "%v", counts)
		// The control thread's own calls (its polls read dispatch times)
		// are not the app's.
		require.Zero(t, counts["hsa_amd_profiling_get_dispatch_time"], "%v", counts)
		require.Zero(t, counts["hsa_signal_load_scacquire"], "%v", counts)

		gpus := map[uint32]bool{}
		for _, ag := range rs.agents {
			if ag.Type() == tracing.AgentGPU {
				gpus[uint32(ag.NodeID())] = true
			}
		}
		require.Len(t, rs.allocs, 4, "%+v", rs.allocs)
		want := []struct {
			op   tracing.AllocOperation
			size uint64
		}{{tracing.AllocAllocate, 65536}, {tracing.AllocFree, 0}, {tracing.AllocAllocate, 8192}, {tracing.AllocFree, 0}}
		for i, al := range rs.allocs {
			require.Equal(t, want[i].op, al.Operation, "%+v", al)
			require.Equal(t, want[i].size, al.Size, "%+v", al)
			require.NotZero(t, al.Address, "%+v", al)
			require.NotZero(t, al.CorrelationID, "%+v", al)
			require.True(t, al.Start > attachedAt && al.End >= al.Start, "%+v", al)
			if want[i].op == tracing.AllocAllocate {
				require.True(t, gpus[al.AgentNode], "allocation on node %d, not the GPU's: %+v", al.AgentNode, al)
			}
		}
		require.Equal(t, rs.allocs[0].Address, rs.allocs[1].Address)
		require.Equal(t, rs.allocs[2].Address, rs.allocs[3].Address)

		status := rs.strings[tracing.TableStatus]
		unavailable := status[tracing.StatusUnavailable|10] // RPG_DOMAIN_SCRATCH_MEMORY's bit
		if scratchTraced {
			require.Empty(t, unavailable)
			require.NotEmpty(t, rs.scratch, "no scratch memory record")
			var allocs int
			for _, s := range rs.scratch {
				require.True(t, s.Start > attachedAt && s.End >= s.Start && s.End <= last+uint64(time.Second), "%+v", s)
				require.Equal(t, uint64(1), s.QueueID, "the app's queue: %+v", s)
				require.True(t, gpus[s.AgentNode], "%+v", s)
				if s.Operation == tracing.ScratchAlloc {
					allocs++
					require.GreaterOrEqual(t, s.Size, uint64(4096*64), "%+v", s)
				}
			}
			require.Equal(t, 1, allocs, "%+v", rs.scratch)
		} else {
			require.Empty(t, rs.scratch)
			require.Contains(t, unavailable, "no tools table")
		}
		require.LessOrEqual(t, lost, uint64(5))
	})
}

// A table another tool has changed is not wrapped on a guess: when a slot
// of the core table points outside libhsa-runtime64 (the app plays a tool
// that replaced hsa_system_get_info's slot before the attach), the attach is
// refused with one line naming the slot, nothing is written, the library
// leaves, and the app's own wrapper keeps working; once the slot is the
// runtime's again, the same attach succeeds and records HSA calls.
func TestAttachRefusesAChangedHSATable(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		a := startAttached(t, ctx, rt)
		a.detach()
		gone := func() bool {
			maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", a.pid))
			return err == nil && !strings.Contains(string(maps), "librocprof-go-preload.so")
		}
		require.Eventually(t, gone, 10*time.Second, 5*time.Millisecond)
		a.do("wrap", "wrapped")
		a.confVars = []string{toolenv.HSACoreAPITrace + "=1", toolenv.HSAAMDExtAPITrace + "=1"}
		a.writeConf("refused")
		_, err := io.WriteString(a.in, "attach\n")
		require.NoError(t, err)
		require.Equal(t, "attached 0", a.line())
		c, err := a.l.Accept()
		require.NoError(t, err)
		defer c.Close()
		a.sock, a.sockR = c, bufio.NewReader(c)
		require.Equal(t, "error --hsa-trace while attached: this runtime's HSA API table was not found "+
			"(slot 2 (hsa_system_get_info) of its core table points outside libhsa-runtime64 (another tool replaced it?))",
			a.sockLine())
		require.Eventually(t, gone, 10*time.Second, 5*time.Millisecond, "the library stayed after the refusal")
		a.do("run 2 0", "ran 2") // the app's wrapper and queue work on
		a.do("unwrap", "unwrapped")

		a.writeConf("accepted")
		_, err = io.WriteString(a.in, "attach\n")
		require.NoError(t, err)
		a.connected()
		a.do("run 2 0", "ran 2")
		a.detach()
		a.do("quit", "bye")
		require.NoError(t, a.wait())
		rs := readSpools(t, a.spools)
		require.NotEmpty(t, rs.api, "no HSA call recorded once the slot was the runtime's again")
	})
}

// A fork child of a process whose HSA API table is wrapped gets its copy of
// the slots back at once (attach.c's atfork handler): the child's
// hsa_system_get_info slot points into libhsa-runtime64 again, while the
// parent stays attached and traced.
func TestAttachForkChildGetsTheTableBack(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		a := startAttachedConf(t, ctx, rt, []string{toolenv.HSACoreAPITrace + "=1"})
		_, err := io.WriteString(a.in, "fork\n")
		require.NoError(t, err)
		require.Regexp(t, `^child slot libhsa-runtime64\.so`, a.line())
		require.Equal(t, "forked 0", a.line())
		a.do("run 2 0", "ran 2")
		a.detach()
		a.do("quit", "bye")
		require.NoError(t, a.wait())
		rs := readSpools(t, a.spools)
		n := 0
		for _, c := range rs.api {
			if rs.strings[uint32(c.Domain)][uint64(c.Function)] == "hsa_queue_add_write_index_screlease" {
				n++
			}
		}
		require.Equal(t, 2, n, "the parent's calls after the fork are traced")
	})
}

// What attach_table.c records is what the shim records in launch mode: the
// same app's allocations, run under LD_PRELOAD and HSA_TOOLS_LIB (where the
// attach is refused: the process is profiled already) and attached, give the
// same MEMORY_ALLOCATION records (operation, size, agent) and the same HSA
// calls of the allocation path, by domain and name, with the same nesting
// (each allocation record under its own call's correlation id or the next).
func TestAttachRecordsHSAAsTheShim(t *testing.T) {
	rts, err := rocmmatrix.Ready(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	vars := []string{toolenv.HSACoreAPITrace + "=1", toolenv.HSAAMDExtAPITrace + "=1", toolenv.MemoryAllocationTrace + "=1"}
	path := map[string]bool{
		"hsa_amd_agent_iterate_memory_pools": true, "hsa_amd_memory_pool_get_info": true,
		"hsa_amd_memory_pool_allocate": true, "hsa_amd_memory_pool_free": true,
		"hsa_agent_iterate_regions": true, "hsa_region_get_info": true,
		"hsa_memory_allocate": true, "hsa_memory_free": true,
	}
	summary := func(rs records) (calls map[string]int, allocs []string) {
		calls = map[string]int{}
		for _, c := range rs.api {
			name := rs.strings[uint32(c.Domain)][uint64(c.Function)]
			if path[name] {
				calls[fmt.Sprintf("%d %s", c.Domain, name)]++
			}
		}
		for _, a := range rs.allocs {
			allocs = append(allocs, fmt.Sprintf("op %d size %d node %d", a.Operation, a.Size, a.AgentNode))
		}
		return calls, allocs
	}
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			a := startAttachedConf(t, ctx, rt, vars)
			a.do("alloc", "alloced")
			a.detach()
			a.do("quit", "bye")
			require.NoError(t, a.wait())
			attached := readSpools(t, a.spools)

			launched := launchedAsShim(t, ctx, rt, a.conf, "alloc\nquit\n", vars...)

			lc, la := summary(launched)
			ac, aa := summary(attached)
			require.NotEmpty(t, aa)
			require.NotEmpty(t, ac)
			require.Equal(t, la, aa, "allocation records")
			require.Equal(t, lc, ac, "HSA calls of the allocation path")
		})
	}
}
