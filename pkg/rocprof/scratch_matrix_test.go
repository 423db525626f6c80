package rocprof_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// What each runtime of the matrix reports about scratch memory: whether it
// has a tools table at all (ROCR 6.1+), and whether it also reports freeing
// scratch a queue kept (when the queue needs more, and when the queue is
// destroyed), which ROCR 7 added; ROCR 6 reports only the hand-back of
// use-once scratch.
var scratchRuntimes = map[string]struct{ traced, freesKept bool }{
	"5.2": {false, false},
	"6.1": {true, false},
	"6.4": {true, false},
	"7.2": {true, true},
}

// ROCR's defaults: HSA_SCRATCH_SINGLE_LIMIT (scratch above it is handed out
// for one dispatch only), the per-lane alignment (a wave's scratch is a
// multiple of 1 KiB on gfx9) and whole pages.
const (
	scratchSingleLimit = 146800640
	scratchLaneAlign   = 1024 / 64
	scratchPage        = 4096
)

func alignUp(v, a uint64) uint64 { return (v + a - 1) / a * a }

// scratchEvent is one expected scratch record, or an app dispatch ("D"),
// in the order of their start stamps.
type scratchEvent struct {
	op    string // D, SCRATCH_MEMORY_ALLOC, SCRATCH_MEMORY_FREE
	flags string
	size  uint64
}

// expectScratch models the runtime (ROCR's queue event handler, docs/shim.md
// "Scratch memory") for the app's dispatches that need scratch, in order:
// a dispatch needing more per lane than the queue has makes the virtual
// GPU ask, and ROCR allocates for every scratch slot of the GPU (kept by the
// queue) unless that exceeds its single limit; then it allocates for the
// dispatch's own slots, for that dispatch only, and takes it back after it.
func expectScratch(dispatches []scratchDispatch, cus, engines, slotsPerCU uint64, freesKept bool) []scratchEvent {
	deviceSlots := alignUp(cus, engines) * slotsPerCU
	var out []scratchEvent
	var have uint64
	kept := false
	for _, d := range dispatches {
		if d.scratch > have {
			per := alignUp(d.scratch, scratchLaneAlign)
			size, flags := alignUp(per*64*deviceSlots, scratchPage), "0"
			once := size > scratchSingleLimit
			if once {
				groups := (d.grid + d.block - 1) / d.block
				slots := (groups + engines - 1) / engines * engines * ((d.block + 63) / 64)
				slots = min(slots, deviceSlots)
				size, flags = alignUp(per*64*slots, scratchPage), "1"
			}
			out = append(out, scratchEvent{"SCRATCH_MEMORY_ALLOC", flags, size})
			if kept && freesKept { // the scratch the queue kept, released inside the allocation
				out = append(out, scratchEvent{"SCRATCH_MEMORY_FREE", "0", 0})
			}
			kept, have = !once, per
			out = append(out, scratchEvent{op: "D"})
			if once {
				out = append(out, scratchEvent{"SCRATCH_MEMORY_FREE", "1", 0})
				have = 0
			}
			continue
		}
		out = append(out, scratchEvent{op: "D"})
	}
	if kept && freesKept { // at queue destruction
		out = append(out, scratchEvent{"SCRATCH_MEMORY_FREE", "0", 0})
	}
	return out
}

type scratchDispatch struct {
	scratch, grid, block uint64
}

// On every runtime of the matrix, scratch_kernels (kernels whose private
// arrays live in scratch, built by that runtime's hipcc) runs on the virtual
// GPU, which asks the runtime for scratch as the command processor does.
// With ROCR 6.1 and later, `--scratch-memory-trace --kernel-trace` records
// each allocation and free the runtime reports, on the dispatch's agent and
// queue, with the size ROCR's sizing gives for what the kernel needs, in
// rocprofv3's CSV columns and as JSON buffer records. ROCm 5.2's runtime has
// no tools table: the explicit option fails the run with lost_domains, and
// --sys-trace runs with a notice (unavailable_domains).
func TestScratchMemoryTraceOnEveryRuntime(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			want, ok := scratchRuntimes[rt.Name]
			require.True(t, ok, "ROCm %s: add it to scratchRuntimes", rt.Name)
			argv := []string{filepath.Join(rt.Apps, "scratch_kernels")}
			if rt.Root != "" {
				argv = append([]string{filepath.Join(repo, "scripts", "rocm-root.sh"), "run", rt.Root, "--"}, argv...)
			}
			run := func(args ...string) (*rocprof.Result, string, string, error) {
				var stdout, stderr, progress strings.Builder
				res, err := rocprof.Run(context.Background(), rocprof.Options{
					Args:   append([]string{"--virtual-gpu", "-f", "csv,json", "-d", t.TempDir(), "-o", "run"}, args...),
					Stdout: &stdout, Stderr: &stderr, Progress: &progress,
				}, argv)
				require.NotNil(t, res, "%v", err)
				require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
				require.Contains(t, stdout.String(), "launches 5")
				return res, stdout.String(), progress.String(), err
			}
			if !want.traced {
				res, _, _, err := run("--scratch-memory-trace", "--kernel-trace")
				var lost *rocprof.LostDomainsError
				require.True(t, errors.As(err, &lost), "the explicit option must fail the run: %v", err)
				m := readManifest(t, res.Dir)
				require.Len(t, m.Lost, 1)
				require.Equal(t, []string{"scratch_memory_trace"}, m.Lost[0].Domains)
				require.Contains(t, m.Lost[0].Reason, "no tools table")
				require.Contains(t, err.Error(), "scratch_memory_trace: this HSA runtime")
				require.NoFileExists(t, filepath.Join(res.Dir, "run_scratch_memory_trace.csv"))
				require.FileExists(t, filepath.Join(res.Dir, "run_kernel_trace.csv"), "the other domains are complete")

				res, _, progress, err := run("--sys-trace")
				require.NoError(t, err)
				m = readManifest(t, res.Dir)
				require.Empty(t, m.Lost)
				require.Len(t, m.Unavailable, 1)
				require.Equal(t, []string{"scratch_memory_trace"}, m.Unavailable[0].Domains)
				require.Regexp(t, `rocprof-go: note: pid \d+: scratch_memory_trace not available: this HSA runtime \(API table major 1\) has no tools table`, progress)
				return
			}
			res, _, progress, err := run("--scratch-memory-trace", "--kernel-trace")
			require.NoError(t, err, "rocprof-go:\n%s", progress)
			checkScratch(t, res.Dir, want.freesKept)
		})
	}
}

type scratchManifest struct {
	Lost []struct {
		Domains []string
		Reason  string
	} `json:"lost_domains"`
	Unavailable []struct {
		Domains []string
		Reason  string
	} `json:"unavailable_domains"`
}

func readManifest(t *testing.T, dir string) scratchManifest {
	raw, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	var m scratchManifest
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func checkScratch(t *testing.T, dir string, freesKept bool) {
	agents := readTable(t, dir, "agent_info.csv")
	var gpu []string
	for _, r := range agents.rows {
		if agents.get(r, "Agent_Type") == "GPU" {
			require.Nil(t, gpu, "one GPU")
			gpu = r
		}
	}
	require.NotNil(t, gpu)
	u := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, s)
		return v
	}
	cus, engines := u(agents.get(gpu, "Cu_Count")), u(agents.get(gpu, "Num_Shader_Banks"))
	require.Zero(t, cus%engines, "the model assumes the CUs fill every engine")

	// The app's dispatches that need scratch, all on one queue of the GPU.
	kt := readTable(t, dir, "kernel_trace.csv")
	sort.SliceStable(kt.rows, func(a, b int) bool {
		return u(kt.get(kt.rows[a], "Dispatch_Id")) < u(kt.get(kt.rows[b], "Dispatch_Id"))
	})
	type stamped struct {
		ev    scratchEvent
		start uint64
		row   []string
	}
	var timeline []stamped
	var dispatches []scratchDispatch
	queue, agent := "", ""
	for _, r := range kt.rows {
		s := u(kt.get(r, "Scratch_Size"))
		if s == 0 {
			continue
		}
		require.True(t, strings.HasPrefix(kt.get(r, "Kernel_Name"), "void scratch_array<"), kt.get(r, "Kernel_Name"))
		require.Equal(t, "1", kt.get(r, "Grid_Size_Y"))
		dispatches = append(dispatches, scratchDispatch{s, u(kt.get(r, "Grid_Size_X")), u(kt.get(r, "Workgroup_Size_X"))})
		timeline = append(timeline, stamped{scratchEvent{op: "D"}, u(kt.get(r, "Start_Timestamp")), r})
		queue, agent = kt.get(r, "Queue_Id"), kt.get(r, "Agent_Id")
	}
	require.Len(t, dispatches, 5, "the app's five launches")
	require.Contains(t, []string{"Agent " + agents.get(gpu, "Node_Id"), "Agent " + agents.get(gpu, "Logical_Node_Id")}, agent, "the dispatches ran on the GPU")

	// The scratch records: rocprofv3's columns, on that agent and queue.
	sc := readTable(t, dir, "scratch_memory_trace.csv")
	require.Equal(t, []string{"Kind", "Operation", "Agent_Id", "Queue_Id", "Thread_Id", "Alloc_Flags",
		"Start_Timestamp", "End_Timestamp", "Allocation_Size"}, columnsOf(sc))
	for _, r := range sc.rows {
		require.Equal(t, "SCRATCH_MEMORY", sc.get(r, "Kind"))
		require.Equal(t, agent, sc.get(r, "Agent_Id"), "%v", r)
		require.Equal(t, queue, sc.get(r, "Queue_Id"), "%v", r)
		require.NotZero(t, u(sc.get(r, "Thread_Id")))
		require.LessOrEqual(t, u(sc.get(r, "Start_Timestamp")), u(sc.get(r, "End_Timestamp")))
		timeline = append(timeline, stamped{scratchEvent{sc.get(r, "Operation"), sc.get(r, "Alloc_Flags"),
			u(sc.get(r, "Allocation_Size"))}, u(sc.get(r, "Start_Timestamp")), r})
	}
	sort.SliceStable(timeline, func(a, b int) bool { return timeline[a].start < timeline[b].start })
	var got []scratchEvent
	for _, s := range timeline {
		got = append(got, s.ev)
	}
	want := expectScratch(dispatches, cus, engines, u(agents.get(gpu, "Max_Slots_Scratch_Cu")), freesKept)
	var stamps strings.Builder
	for _, s := range timeline {
		fmt.Fprintf(&stamps, "%d %s %v\n", s.start, s.ev.op, s.row)
	}
	require.Equal(t, want, got, "scratch records and dispatches by start time (right) against ROCR's sizing (left); the timeline:\n%s", stamps.String())

	// The JSON buffer records hold the same events, with the SDK's kind and
	// operation numbers and the queue handle.
	matches, err := filepath.Glob(filepath.Join(dir, "*_results.json"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	raw, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	var doc struct {
		Tool []struct {
			Records struct {
				Scratch []struct {
					Kind      int    `json:"kind"`
					Operation int    `json:"operation"`
					Flags     int    `json:"flags"`
					Size      uint64 `json:"allocation_size"`
					Queue     struct {
						Handle uint64 `json:"handle"`
					} `json:"queue_id"`
				} `json:"scratch_memory"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Len(t, doc.Tool, 1)
	js := doc.Tool[0].Records.Scratch
	require.Len(t, js, len(sc.rows))
	ops := map[int]int{}
	var bytes uint64
	for _, s := range js {
		require.Equal(t, 12, s.Kind, "ROCPROFILER_BUFFER_TRACING_SCRATCH_MEMORY")
		require.Equal(t, queue, strconv.FormatUint(s.Queue.Handle, 10))
		ops[s.Operation]++
		bytes += s.Size
	}
	var wantOps = map[int]int{}
	var wantBytes uint64
	for _, e := range want {
		switch e.op {
		case "SCRATCH_MEMORY_ALLOC":
			wantOps[1]++
			wantBytes += e.size
		case "SCRATCH_MEMORY_FREE":
			wantOps[2]++
		}
	}
	require.Equal(t, wantOps, ops, "operations 1 (alloc) and 2 (free)")
	require.Equal(t, wantBytes, bytes)
}

func columnsOf(c csvTable) []string {
	out := make([]string, len(c.col))
	for name, i := range c.col {
		out[i] = name
	}
	return out
}
