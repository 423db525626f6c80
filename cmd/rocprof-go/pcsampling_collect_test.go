package main

import (
	"encoding/csv"
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
	m, _ := filepath.Glob(filepath.Join(dir, "*", "*_"+suffix))
	require.Len(t, m, 1, "%s in %s", suffix, dir)
	f, err := os.Open(m[0])
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var out []map[string]string
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = r[i]
		}
		out = append(out, row)
	}
	return out
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
	m, _ := filepath.Glob(filepath.Join(dir, "*", "*_results.json"))
	require.Len(t, m, 1, "results.json in %s", dir)
	data, err := os.ReadFile(m[0])
	require.NoError(t, err)
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
	require.NoError(t, json.Unmarshal(data, &doc))
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
	rts, err := rocmmatrix.Runtimes(repoDir(), buildDir())
	require.NoError(t, err)
	cache := t.TempDir()
	for _, rt := range rts {
		if rt.Name != "6.4" && rt.Name != "7.2" {
			continue
		}
		rt := rt
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			if !strings.HasPrefix(cache, "/tmp/") {
				rt = rt.WithBinds(filepath.Dir(cache))
			}
			run := func(arch string, interval int, extra []string, app ...string) (string, string, int) {
				dir := t.TempDir()
				args := []string{"--virtual-gpu=" + arch, "--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap",
					"--pc-sampling-unit", "time", "--pc-sampling-interval", strconv.Itoa(interval), "--kernel-trace",
					"-f", "csv", "json", "-d", dir}
				args = append(append(args, extra...), "--")
				stderr, code := shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, append(args, app...)...)
				return dir, stderr, code
			}
			// grids is the shortest measured duration and the number of
			// dispatches of each grid (by waves) over the runs of a subtest:
			// the shortest is the model's (a dispatch may wait for the CPU).
			type grids struct{ model, seen map[uint64]uint64 }
			newGrids := func() grids { return grids{map[uint64]uint64{}, map[uint64]uint64{}} }
			check := func(t *testing.T, dir string, interval uint64, capacity uint64, g grids) map[string]int {
				kt := pcsRows(t, dir, "kernel_trace.csv")
				type disp struct {
					corr, start, end, waves uint64
					name                    string
				}
				ds := map[string]disp{}
				for _, r := range kt {
					grid := pcsNum(t, r["Grid_Size_X"]) * pcsNum(t, r["Grid_Size_Y"]) * pcsNum(t, r["Grid_Size_Z"])
					ds[r["Dispatch_Id"]] = disp{pcsNum(t, r["Correlation_Id"]), pcsNum(t, r["Start_Timestamp"]),
						pcsNum(t, r["End_Timestamp"]), (grid + 63) / 64, r["Kernel_Name"]}
				}
				m, _ := filepath.Glob(filepath.Join(dir, "*", "*_pc_sampling_host_trap.csv"))
				require.Len(t, m, 1)
				head, err := os.ReadFile(m[0])
				require.NoError(t, err)
				require.True(t, strings.HasPrefix(string(head),
					`"Sample_Timestamp","Exec_Mask","Dispatch_Id","Instruction","Instruction_Comment","Correlation_Id"`+"\n"))
				per := map[string]uint64{}
				byName := map[string]int{}
				rows := pcsRows(t, dir, "pc_sampling_host_trap.csv")
				pcsJSONMatchesCSV(t, dir, rows)
				for _, s := range rows {
					d, ok := ds[s["Dispatch_Id"]]
					require.True(t, ok, "sample of dispatch %s not in kernel_trace.csv", s["Dispatch_Id"])
					require.Equal(t, d.corr, pcsNum(t, s["Correlation_Id"]))
					ts := pcsNum(t, s["Sample_Timestamp"])
					require.True(t, ts >= d.start && ts <= d.end, "sample at %d outside %d..%d", ts, d.start, d.end)
					require.Equal(t, strconv.FormatUint(^uint64(0), 10), s["Exec_Mask"])
					require.NotEmpty(t, s["Instruction"], "disassembled (llvm-objdump in the root)")
					require.Empty(t, s["Instruction_Comment"])
					per[s["Dispatch_Id"]]++
					byName[d.name]++
				}
				// The model's duration of a dispatch is its kernel's and grid's
				// (virtual-gpu.md); a measured one may be longer (the
				// dispatch waited for the CPU), so the shortest of a grid, over
				// this subtest's runs, is the model's.
				model, seen := g.model, g.seen
				for _, d := range ds {
					seen[d.waves]++
					if m, ok := model[d.waves]; !ok || d.end-d.start < m {
						model[d.waves] = d.end - d.start
					}
				}
				for id, d := range ds {
					if strings.HasPrefix(d.name, "__amd_rocclr_") || per[id] == 0 {
						continue
					}
					w := min(d.waves, capacity)
					n := per[id]
					require.Zero(t, n%w, "dispatch %s: %d samples, not whole instants of %d waves", id, n, w)
					instants := model[d.waves] / (1000 * interval)
					// writing the samples (~10 ns each) may add instants to the measured duration
					slack := 1 + n*20/(1000*interval)
					require.True(t, n/w <= instants, "dispatch %s (%s): %d samples = %d instants of %d waves; the model's %d ns allows %d",
						id, d.name, n, n/w, w, model[d.waves], instants)
					// A grid dispatched once may have waited (its first
					// dispatch on a loaded machine: 186 us measured for a
					// 10 us model): its measured time bounds the samples
					// from above only.
					if seen[d.waves] > 1 {
						require.True(t, n/w+slack >= instants,
							"dispatch %s (%s): %d samples = %d instants of %d waves; the model's %d ns needs %d",
							id, d.name, n, n/w, w, model[d.waves], instants)
					}
					t.Logf("dispatch %s %s: %d samples (%d instants x %d waves), %d ns", id, d.name, n, n/w, w, d.end-d.start)
				}
				return byName
			}
			t.Run("gfx90a", func(t *testing.T) {
				dir, stderr, code := run("gfx90a", 1, nil, filepath.Join(rt.Apps, "tiny_kernels"), "5", "sync")
				require.Equal(t, 0, code, stderr)
				byName := check(t, dir, 1, 3328, newGrids())
				require.Equal(t, 10, byName["tiny(int*)"], "2 samples (2,010 ns at 1 us, 1 wave) x 5 dispatches")
			})
			t.Run("gfx942", func(t *testing.T) {
				app := filepath.Join(rt.Apps, "gfx942", "multistream")
				// Two iterations: each grid is dispatched twice, and
				// the shortest is the model's duration.
				dir, stderr, code := run("gfx942", 5, nil, app, "1", "2")
				require.Equal(t, 0, code, stderr)
				g := newGrids()
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
				require.NotEqual(t, 0, code, stderr)
				require.Regexp(t, `\d+ PC samples the runtime reported lost`, stderr)
				data, err := os.ReadFile(filepath.Join(dir, "run.json"))
				require.NoError(t, err)
				var m struct {
					LostRecords []struct {
						PCSamplesLost uint64 `json:"pc_samples_lost"`
					} `json:"lost_records"`
				}
				require.NoError(t, json.Unmarshal(data, &m))
				require.Len(t, m.LostRecords, 1)
				require.NotZero(t, m.LostRecords[0].PCSamplesLost)
				kept := pcsRows(t, dir, "pc_sampling_host_trap.csv")
				pcsJSONMatchesCSV(t, dir, kept)
				t.Logf("overflow: %d samples kept, %d lost", len(kept), m.LostRecords[0].PCSamplesLost)
			})
		})
	}
}
