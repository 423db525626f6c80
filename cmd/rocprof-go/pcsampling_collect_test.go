package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// pcsRows reads one CSV file of a run's output directory (by suffix).
func pcsRows(t *testing.T, dir, suffix string) []map[string]string {
	t.Helper()
	return readCSVRows(t, pcsOne(t, dir, suffix))
}

func pcsNum(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, s)
	return v
}

// pcsJSONMatchesCSV checks a -f csv json run's results.json: as many
// buffer_records.pc_sample_host_trap records as pc_sampling_host_trap.csv
// has rows, in the same order with the same dispatch id, timestamp, exec
// mask and correlation id, and each record's inst_index naming its row's
// instruction in strings.pc_sample_instructions.
func pcsJSONMatchesCSV(t *testing.T, dir string, rows []map[string]string) {
	t.Helper()
	var doc struct {
		Tool []struct {
			Strings struct {
				Instructions []string `json:"pc_sample_instructions"`
				Comments     []string `json:"pc_sample_comments"`
			} `json:"strings"`
			BufferRecords struct {
				HostTrap []struct {
					Record struct {
						PC struct {
							CodeObjectID uint64 `json:"code_object_id"`
						} `json:"pc"`
						ExecMask   uint64 `json:"exec_mask"`
						Timestamp  uint64 `json:"timestamp"`
						DispatchID uint64 `json:"dispatch_id"`
						Corr       struct {
							Internal uint64 `json:"internal"`
						} `json:"corr_id"`
					} `json:"record"`
					InstIndex int64 `json:"inst_index"`
				} `json:"pc_sample_host_trap"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	readJSONFile(t, pcsOne(t, dir, "results.json"), &doc)
	var n int
	for _, p := range doc.Tool {
		n += len(p.BufferRecords.HostTrap)
	}
	require.Equal(t, len(rows), n, "pc_sample_host_trap records vs CSV rows")
	i := 0
	for _, p := range doc.Tool {
		require.Len(t, p.Strings.Comments, len(p.Strings.Instructions))
		for _, r := range p.BufferRecords.HostTrap {
			row := rows[i]
			i++
			require.Equal(t, row["Dispatch_Id"], strconv.FormatUint(r.Record.DispatchID, 10))
			require.Equal(t, row["Sample_Timestamp"], strconv.FormatUint(r.Record.Timestamp, 10))
			require.Equal(t, row["Exec_Mask"], strconv.FormatUint(r.Record.ExecMask, 10))
			require.Equal(t, row["Correlation_Id"], strconv.FormatUint(r.Record.Corr.Internal, 10))
			if r.Record.PC.CodeObjectID == 0 {
				require.Equal(t, int64(-1), r.InstIndex)
				continue
			}
			require.True(t, r.InstIndex >= 0 && r.InstIndex < int64(len(p.Strings.Instructions)), "inst_index %d", r.InstIndex)
			require.Equal(t, row["Instruction"], p.Strings.Instructions[r.InstIndex])
		}
	}
}

// Host-trap PC samples through the CLI (issue 34, step 3) on ROCm 6.4 and
// 7.2, gfx90a and gfx942: pc_sampling_host_trap.csv has rocprofv3's
// columns; every sample names a kernel_trace.csv dispatch (Dispatch_Id and
// Correlation_Id) and lies within its run; each dispatch has the virtual
// GPU's model count, floor(D / 1000 I) × min(waves, capacity) (D: the
// shortest measured run of the grid; writing samples may add an instant); the instructions
// are disassembled; --kernel-include-regex keeps only the included kernels'
// samples; an overflow (1,024 waves at 1 µs) is counted lost, reported in
// run.json and fails the run. Every run also writes JSON: results.json's
// pc_sample_host_trap records are the CSV's rows (pcsJSONMatchesCSV).
func TestPCSamplingHostTrapThroughCLI(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, []string{"6.4", "7.2"}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		run := func(arch string, interval int, extra []string, app ...string) (string, string, int) {
			dir := t.TempDir()
			args := []string{"--virtual-gpu=" + arch, "--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap",
				"--pc-sampling-unit", "time", "--pc-sampling-interval", strconv.Itoa(interval), "--kernel-trace",
				"-f", "csv", "json", "-d", dir}
			args = append(append(args, extra...), "--")
			stderr, code := shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, append(args, app...)...)
			return dir, stderr, code
		}
		// g holds each grid (by waves) over the runs of a subtest.
		check := func(t *testing.T, dir string, interval uint64, capacity uint64, g pcsGrids) map[string]int {
			ds := pcsDispatches(t, dir)
			head, err := os.ReadFile(pcsOne(t, dir, "pc_sampling_host_trap.csv"))
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(head),
				`"Sample_Timestamp","Exec_Mask","Dispatch_Id","Instruction","Instruction_Comment","Correlation_Id"`+"\n"))
			per := map[string]uint64{}
			byName := map[string]int{}
			rows := pcsRows(t, dir, "pc_sampling_host_trap.csv")
			pcsJSONMatchesCSV(t, dir, rows)
			for _, s := range rows {
				d := pcsSampleDispatch(t, ds, s)
				require.Empty(t, s["Instruction_Comment"])
				per[s["Dispatch_Id"]]++
				byName[d.name]++
			}
			for _, d := range ds {
				g.add(d.waves(), d.start, d.end)
			}
			for id, d := range ds {
				if strings.HasPrefix(d.name, "__amd_rocclr_") || per[id] == 0 {
					continue
				}
				// an instant every interval us
				g.checkSamples(t, id, d.name, d.waves(), per[id], min(d.waves(), capacity), "waves", d.end-d.start,
					func(ns uint64) uint64 { return ns / (1000 * interval) })
			}
			return byName
		}
		t.Run("gfx90a", func(t *testing.T) {
			dir, stderr, code := run("gfx90a", 1, nil, filepath.Join(rt.Apps, "tiny_kernels"), "5", "sync")
			require.Equal(t, 0, code, stderr)
			byName := check(t, dir, 1, 3328, newPCSGrids())
			require.Equal(t, 10, byName["tiny(int*)"], "2 samples (2,010 ns at 1 us, 1 wave) x 5 dispatches")
		})
		t.Run("gfx942", func(t *testing.T) {
			app := filepath.Join(rt.Apps, "gfx942", "multistream")
			// Two iterations: each grid is dispatched twice, and
			// the shortest is the model's duration.
			dir, stderr, code := run("gfx942", 5, nil, app, "1", "2")
			require.Equal(t, 0, code, stderr)
			g := newPCSGrids()
			byName := check(t, dir, 5, 9728, g)
			require.NotZero(t, byName["vadd(float const*, float const*, float*, int)"])
			dir, stderr, code = run("gfx942", 5, []string{"--kernel-include-regex", "^scale"}, app, "1", "1")
			require.Equal(t, 0, code, stderr)
			byName = check(t, dir, 5, 9728, g)
			require.Zero(t, byName["vadd(float const*, float const*, float*, int)"])
			require.NotZero(t, byName["scale(float*, float, int)"])
			require.Len(t, pcsRows(t, dir, "kernel_trace.csv"), 3, "the kernel trace stays whole")
		})
		t.Run("overflow", func(t *testing.T) {
			dir, stderr, code := run("gfx90a", 1, nil, filepath.Join(rt.Apps, "multistream"), "1", "1")
			pcsOverflowed(t, dir, stderr, code, "pc_sampling_host_trap.csv", pcsJSONMatchesCSV)
		})
	})
}

// pcsDispatch is a kernel_trace.csv row as the PC-sampling checks read it.
type pcsDispatch struct {
	corr, start, end uint64
	items, wg        uint64 // work-items of the grid and of a workgroup
	name             string
}

func (d pcsDispatch) waves() uint64         { return (d.items + 63) / 64 }
func (d pcsDispatch) workgroups() uint64    { return (d.items + d.wg - 1) / d.wg }
func (d pcsDispatch) wavesPerGroup() uint64 { return (d.wg + 63) / 64 }

// pcsDispatches reads a run's kernel_trace.csv by dispatch id.
func pcsDispatches(t *testing.T, dir string) map[string]pcsDispatch {
	t.Helper()
	ds := map[string]pcsDispatch{}
	for _, r := range pcsRows(t, dir, "kernel_trace.csv") {
		ds[r["Dispatch_Id"]] = pcsDispatch{pcsNum(t, r["Correlation_Id"]), pcsNum(t, r["Start_Timestamp"]), pcsNum(t, r["End_Timestamp"]),
			pcsNum(t, r["Grid_Size_X"]) * pcsNum(t, r["Grid_Size_Y"]) * pcsNum(t, r["Grid_Size_Z"]),
			pcsNum(t, r["Workgroup_Size_X"]) * pcsNum(t, r["Workgroup_Size_Y"]) * pcsNum(t, r["Workgroup_Size_Z"]), r["Kernel_Name"]}
	}
	return ds
}

// pcsSampleDispatch checks what a sample row s holds whatever the method:
// a dispatch of ds (kernel_trace.csv) and its correlation id, a time
// within the dispatch's run, a full exec mask and a disassembled
// instruction. It returns the dispatch.
func pcsSampleDispatch(t *testing.T, ds map[string]pcsDispatch, s map[string]string) pcsDispatch {
	t.Helper()
	d, ok := ds[s["Dispatch_Id"]]
	require.True(t, ok, "sample of dispatch %s not in kernel_trace.csv", s["Dispatch_Id"])
	require.Equal(t, d.corr, pcsNum(t, s["Correlation_Id"]))
	ts := pcsNum(t, s["Sample_Timestamp"])
	require.True(t, ts >= d.start && ts <= d.end, "sample at %d outside %d..%d", ts, d.start, d.end)
	require.Equal(t, strconv.FormatUint(^uint64(0), 10), s["Exec_Mask"])
	require.NotEmpty(t, s["Instruction"], "disassembled (llvm-objdump in the root)")
	return d
}

// pcsGrids holds, per grid (a key: its waves, its work-items), the
// shortest measured duration of its dispatches over a subtest's runs and
// how often it was dispatched. The model's duration of a dispatch is its
// kernel's and grid's (virtual-gpu.md); a measured one may be longer (the
// dispatch waited for the CPU), so the shortest of a grid is the model's.
type pcsGrids struct{ model, seen map[uint64]uint64 }

func newPCSGrids() pcsGrids { return pcsGrids{map[uint64]uint64{}, map[uint64]uint64{}} }

// add records a dispatch of grid key that ran from start to end (ns).
func (g pcsGrids) add(key, start, end uint64) {
	g.seen[key]++
	if m, ok := g.model[key]; !ok || end-start < m {
		g.model[key] = end - start
	}
}

// checkSamples checks the n samples of dispatch id (kernel name) of grid
// key, measured at took ns, against the model: whole instants of w (the
// waves or CUs sampled at each), no more instants than the model's
// duration of the grid allows (instants: how many fit in ns), and no fewer
// but for the slack writing the samples (~10 ns each) may add to a
// measured duration.
func (g pcsGrids) checkSamples(t *testing.T, id, name string, key, n, w uint64, unit string, took uint64, instants func(ns uint64) uint64) {
	t.Helper()
	require.Zero(t, n%w, "dispatch %s: %d samples, not whole instants of %d %s", id, n, w, unit)
	want := instants(g.model[key])
	slack := 1 + instants(n*20)
	require.LessOrEqual(t, n/w, want, "dispatch %s (%s): %d samples = %d instants of %d %s; the model's %d ns allows %d",
		id, name, n, n/w, w, unit, g.model[key], want)
	// A grid dispatched once may have waited (its first dispatch on a
	// loaded machine: 186 us measured for a 10 us model): its measured
	// time bounds the samples from above only.
	if g.seen[key] > 1 {
		require.GreaterOrEqual(t, n/w+slack, want, "dispatch %s (%s): %d samples = %d instants of %d %s; the model's %d ns needs %d",
			id, name, n, n/w, w, unit, g.model[key], want)
	}
	t.Logf("dispatch %s %s: %d samples (%d instants x %d %s), %d ns", id, name, n, n/w, w, unit, took)
}

// pcsOverflowed checks a run whose samples overflowed the runtime's
// buffers: it fails saying samples were lost, run.json's lost_records
// counts them, and the samples kept are written (csv, a file of the run's
// output directory dir), results.json's records being the CSV's rows
// (matchJSON).
func pcsOverflowed(t *testing.T, dir, stderr string, code int, csv string, matchJSON func(*testing.T, string, []map[string]string)) {
	t.Helper()
	require.NotEqual(t, 0, code, stderr)
	require.Regexp(t, `\d+ PC samples the runtime reported lost`, stderr)
	var m struct {
		LostRecords []struct {
			PCSamplesLost uint64 `json:"pc_samples_lost"`
		} `json:"lost_records"`
	}
	readJSONFile(t, filepath.Join(dir, "run.json"), &m)
	require.Len(t, m.LostRecords, 1)
	require.NotZero(t, m.LostRecords[0].PCSamplesLost)
	kept := pcsRows(t, dir, csv)
	matchJSON(t, dir, kept)
	t.Logf("overflow: %d samples kept, %d lost", len(kept), m.LostRecords[0].PCSamplesLost)
}

// pcsStochasticClass is the virtual GPU's class of an instruction, from
// its llvm-objdump text (vgpu/src/pcsample.c classifies the encoding):
// rocprofiler-sdk's instruction type when issued and not-issued reason
// when not.
func pcsStochasticClass(inst string) (typ, reason string) {
	op, _, _ := strings.Cut(inst, " ")
	switch {
	case op == "s_waitcnt":
		return "OTHER", "WAITCNT"
	case op == "s_barrier":
		return "BARRIER", "BARRIER_WAIT"
	case op == "s_branch":
		return "BRANCH_TAKEN", "NO_INSTRUCTION_AVAILABLE"
	case strings.HasPrefix(op, "s_cbranch_"):
		return "BRANCH_NOT_TAKEN", "NO_INSTRUCTION_AVAILABLE"
	case op == "s_getpc_b64" || op == "s_setpc_b64" || op == "s_swappc_b64":
		return "JUMP", "NO_INSTRUCTION_AVAILABLE"
	case op == "s_sendmsg" || op == "s_sendmsghalt":
		return "MESSAGE", "ARBITER_NOT_WIN"
	case strings.HasPrefix(op, "s_endpgm") || op == "s_nop" || op == "s_setprio" || op == "s_sleep" ||
		op == "s_trap" || op == "s_icache_inv" || op == "s_wakeup" || op == "s_sethalt" || op == "s_setkill" ||
		op == "s_incperflevel" || op == "s_decperflevel" || op == "s_ttracedata" || strings.HasPrefix(op, "s_set_gpr_idx_"):
		return "OTHER", "ARBITER_NOT_WIN"
	case strings.HasPrefix(op, "s_"):
		return "SCALAR", "ARBITER_NOT_WIN"
	case strings.HasPrefix(op, "v_mfma") || strings.HasPrefix(op, "v_smfmac"):
		return "MATRIX", "ALU_DEPENDENCY"
	case strings.HasPrefix(op, "v_"):
		return "VALU", "ALU_DEPENDENCY"
	case strings.HasPrefix(op, "ds_"):
		return "LDS", "ARBITER_NOT_WIN"
	case strings.HasPrefix(op, "global_") || strings.HasPrefix(op, "flat_") || strings.HasPrefix(op, "scratch_"):
		return "FLAT", "ARBITER_NOT_WIN"
	case strings.HasPrefix(op, "buffer_") || strings.HasPrefix(op, "tbuffer_") || strings.HasPrefix(op, "image_"):
		return "TEX", "ARBITER_NOT_WIN"
	case strings.HasPrefix(op, "exp"):
		return "EXPORT", "ARBITER_NOT_WIN"
	}
	return "OTHER", "ARBITER_NOT_WIN"
}

// pcsStochasticJSON checks results.json's buffer_records.pc_sample_stochastic
// against pc_sampling_stochastic.csv's rows, one for one: the common
// fields, and the snapshot's issued flag, type, reason and wave count under
// rocprofiler-sdk's serializer's keys; no host-trap record.
func pcsStochasticJSON(t *testing.T, dir string, rows []map[string]string) {
	t.Helper()
	var doc struct {
		Tool []struct {
			Strings struct {
				Instructions []string `json:"pc_sample_instructions"`
			} `json:"strings"`
			BufferRecords struct {
				HostTrap   []json.RawMessage `json:"pc_sample_host_trap"`
				Stochastic []struct {
					Record struct {
						Flags struct {
							HasMemCnt *uint64 `json:"has_mem_cnt"`
						} `json:"flags"`
						HWID       map[string]uint64 `json:"hw_id"`
						Timestamp  uint64            `json:"timestamp"`
						DispatchID uint64            `json:"dispatch_id"`
						Corr       struct {
							Internal uint64 `json:"internal"`
						} `json:"corr_id"`
						WaveIssued *uint64        `json:"wave_issued"`
						InstType   string         `json:"inst_type"`
						WaveCnt    *uint64        `json:"wave_cnt"`
						Snapshot   map[string]any `json:"snapshot"`
					} `json:"record"`
					InstIndex int64 `json:"inst_index"`
				} `json:"pc_sample_stochastic"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	readJSONFile(t, pcsOne(t, dir, "results.json"), &doc)
	i := 0
	for _, p := range doc.Tool {
		require.Empty(t, p.BufferRecords.HostTrap)
		for _, r := range p.BufferRecords.Stochastic {
			require.Less(t, i, len(rows), "more pc_sample_stochastic records than CSV rows")
			row := rows[i]
			i++
			rec := r.Record
			require.Equal(t, row["Dispatch_Id"], strconv.FormatUint(rec.DispatchID, 10))
			require.Equal(t, row["Sample_Timestamp"], strconv.FormatUint(rec.Timestamp, 10))
			require.Equal(t, row["Correlation_Id"], strconv.FormatUint(rec.Corr.Internal, 10))
			require.NotNil(t, rec.Flags.HasMemCnt)
			require.Zero(t, *rec.Flags.HasMemCnt, "no memory counters on gfx9")
			require.Contains(t, rec.HWID, "cu_or_wgp_id")
			require.NotNil(t, rec.WaveIssued)
			require.Equal(t, row["Wave_Issued_Instruction"], strconv.FormatUint(*rec.WaveIssued, 10))
			require.Equal(t, row["Instruction_Type"], rec.InstType)
			require.NotNil(t, rec.WaveCnt)
			require.Equal(t, row["Wave_Count"], strconv.FormatUint(*rec.WaveCnt, 10))
			require.Equal(t, row["Stall_Reason"], rec.Snapshot["stall_reason"])
			require.Len(t, rec.Snapshot, 22, "stall_reason, dual_issue_valu and 2 x 10 arbiter bits")
			require.EqualValues(t, 0, rec.Snapshot["dual_issue_valu"])
			require.True(t, r.InstIndex >= 0 && r.InstIndex < int64(len(p.Strings.Instructions)), "inst_index %d", r.InstIndex)
			require.Equal(t, row["Instruction"], p.Strings.Instructions[r.InstIndex])
		}
	}
	require.Equal(t, len(rows), i, "pc_sample_stochastic records vs CSV rows")
}

// Stochastic PC samples through the CLI (issue 34) on the virtual MI300X:
// on ROCm 7.2, pc_sampling_stochastic.csv has rocprofv3's 10 columns; every
// sample names a kernel_trace.csv dispatch and lies within its run, with a
// disassembled instruction; each dispatch has the model's count,
// floor(D x 2,100 MHz / (1000 x I)) instants x min(workgroups, 304 CUs);
// in each dispatch's samples (in ROCR's order, the order the trap handler
// wrote them) the even ones issued their instruction, typed by its class,
// the odd ones did not, with the class's reason; Wave_Count is waves per
// workgroup x ceil(workgroups / 304); results.json's pc_sample_stochastic
// records are the rows; --kernel-include-regex keeps only the included
// kernels' samples; an overflow is counted lost and fails the run. ROCm
// 6.4's runtime has no stochastic sampling: refused before the app starts.
func TestPCSamplingStochasticThroughCLI(t *testing.T) {
	cli := shippedBinary(t)
	const cus, mhz = 304, 2100
	onRuntimes(t, []string{"6.4", "7.2"}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		app := filepath.Join(rt.Apps, "gfx942", "multistream")
		run := func(interval int, extra []string, app ...string) (string, string, int) {
			dir := t.TempDir()
			args := []string{"--virtual-gpu=gfx942", "--pc-sampling-beta-enabled", "--pc-sampling-method", "stochastic",
				"--pc-sampling-unit", "cycles", "--pc-sampling-interval", strconv.Itoa(interval), "--kernel-trace",
				"-f", "csv", "json", "-d", dir}
			args = append(append(args, extra...), "--")
			stderr, code := shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, append(args, app...)...)
			return dir, stderr, code
		}
		if rt.Name == "6.4" {
			_, stderr, code := run(4096, nil, app, "1", "1")
			require.NotEqual(t, 0, code, stderr)
			require.NotContains(t, stderr, "dispatches=", "the app must not start")
			require.Regexp(t, `PC sampling: the ROCm runtime the app will load, \S*libhsa-runtime64\.so\S*, has no stochastic sampling`, stderr)
			require.Contains(t, stderr, "ROCm 7.x offers stochastic on gfx942 (MI300); use --pc-sampling-method host_trap --pc-sampling-unit time here")
			return
		}
		// g holds each grid (by work-items) over the runs.
		g := newPCSGrids()
		check := func(t *testing.T, dir string, interval uint64) map[string]int {
			ds := pcsDispatches(t, dir)
			head, err := os.ReadFile(pcsOne(t, dir, "pc_sampling_stochastic.csv"))
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(head), `"Sample_Timestamp","Exec_Mask","Dispatch_Id","Instruction",`+
				`"Instruction_Comment","Correlation_Id","Wave_Issued_Instruction","Instruction_Type","Stall_Reason","Wave_Count"`+"\n"))
			none, _ := filepath.Glob(filepath.Join(dir, "*", "*_pc_sampling_host_trap.csv"))
			require.Empty(t, none)
			rows := pcsRows(t, dir, "pc_sampling_stochastic.csv")
			pcsStochasticJSON(t, dir, rows)
			per := map[string]uint64{}
			byName := map[string]int{}
			const typ, why = "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_", "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_"
			for _, s := range rows {
				d := pcsSampleDispatch(t, ds, s)
				idx := per[s["Dispatch_Id"]]
				per[s["Dispatch_Id"]]++
				byName[d.name]++
				ty, reason := pcsStochasticClass(s["Instruction"])
				if idx%2 == 0 {
					require.Equal(t, "1", s["Wave_Issued_Instruction"], "sample %d of dispatch %s", idx, s["Dispatch_Id"])
					require.Equal(t, typ+ty, s["Instruction_Type"], s["Instruction"])
					require.Equal(t, why+"OTHER_WAIT", s["Stall_Reason"])
				} else {
					require.Equal(t, "0", s["Wave_Issued_Instruction"], "sample %d of dispatch %s", idx, s["Dispatch_Id"])
					require.Equal(t, typ+"NO_INST", s["Instruction_Type"])
					require.Equal(t, why+reason, s["Stall_Reason"], s["Instruction"])
				}
				require.Equal(t, strconv.FormatUint(min(d.wavesPerGroup()*((d.workgroups()+cus-1)/cus), 32), 10), s["Wave_Count"])
			}
			for _, d := range ds {
				g.add(d.items, d.start, d.end)
			}
			for id, d := range ds {
				if strings.HasPrefix(d.name, "__amd_rocclr_") || per[id] == 0 {
					continue
				}
				// an instant every interval cycles at mhz
				g.checkSamples(t, id, d.name, d.items, per[id], min(d.workgroups(), cus), "CUs", d.end-d.start,
					func(ns uint64) uint64 { return ns * mhz / (1000 * interval) })
			}
			return byName
		}
		// Two iterations: each grid is dispatched twice, and the
		// shortest is the model's duration.
		dir, stderr, code := run(4096, nil, app, "1", "2")
		require.Equal(t, 0, code, stderr)
		byName := check(t, dir, 4096)
		require.NotZero(t, byName["vadd(float const*, float const*, float*, int)"])
		require.NotZero(t, byName["scale(float*, float, int)"])
		dir, stderr, code = run(4096, []string{"--kernel-include-regex", "^scale"}, app, "1", "1")
		require.Equal(t, 0, code, stderr)
		byName = check(t, dir, 4096)
		require.Zero(t, byName["vadd(float const*, float const*, float*, int)"])
		require.NotZero(t, byName["scale(float*, float, int)"])
		require.Len(t, pcsRows(t, dir, "kernel_trace.csv"), 3, "the kernel trace stays whole")

		t.Run("overflow", func(t *testing.T) {
			// 256 cycles: 83 instants x 256 CUs per dispatch, faster
			// than ROCR's thread empties its 8,192-sample buffers
			dir, stderr, code := run(256, nil, app, "1", "1")
			pcsOverflowed(t, dir, stderr, code, "pc_sampling_stochastic.csv", pcsStochasticJSON)
		})
	})
}
