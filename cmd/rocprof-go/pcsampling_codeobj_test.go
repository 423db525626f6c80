package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// PC samples in code objects the app loaded from its memory (issue 34) on
// ROCm 6.4 and 7.2: HIP reads a hipModuleLoad file itself and ROCclr's
// blit kernels are built in, so both load as memory:// URIs. The shim
// keeps their bytes beside the spool, and their samples get instruction
// text (no "Unrecognized code object id"). The module
// (testdata/codeobjects/module_fill_dwarf_gfx90a.elf) has a line table: its
// samples' Instruction_Comment is the source line (with the inlined
// calls' sites), the same in results.json's pc_sample_comments; the app's
// own kernels, built without -g, have none.
func TestPCSamplingCodeObjectsFromMemory(t *testing.T) {
	cli := shippedBinary(t)
	module := filepath.Join(repoDir(), "testdata", "codeobjects", "module_fill_dwarf_gfx90a.elf")
	line := regexp.MustCompile(`^[^ ]+:[1-9][0-9]*( -> [^ ]+:[1-9][0-9]*)*$`)
	onRuntimes(t, []string{"6.4", "7.2"}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		rt = rt.WithBinds(filepath.Dir(module))
		run := func(app ...string) string {
			dir := t.TempDir()
			args := []string{"--virtual-gpu=gfx90a", "--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap",
				"--pc-sampling-unit", "time", "--pc-sampling-interval", "1", "--kernel-trace", "-f", "csv", "json", "-d", dir, "--"}
			stderr, code := shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, append(args, app...)...)
			require.Equal(t, 0, code, stderr)
			require.NotContains(t, stderr, "have no instruction text")
			return dir
		}
		// samples reads a run's samples by kernel name, checks that
		// each has instruction text, and that JSON's comments are
		// the CSV's.
		samples := func(dir string) map[string][]map[string]string {
			names := map[string]string{}
			for _, r := range pcsRows(t, dir, "kernel_trace.csv") {
				names[r["Dispatch_Id"]] = r["Kernel_Name"]
			}
			rows := pcsRows(t, dir, "pc_sampling_host_trap.csv")
			pcsJSONMatchesCSV(t, dir, rows)
			pcsJSONCommentsMatchCSV(t, dir, rows)
			by := map[string][]map[string]string{}
			for _, r := range rows {
				require.NotEmpty(t, r["Instruction"], "dispatch %s (%s): %v", r["Dispatch_Id"], names[r["Dispatch_Id"]], r)
				require.NotContains(t, r["Instruction_Comment"], "Unrecognized code object id")
				by[names[r["Dispatch_Id"]]] = append(by[names[r["Dispatch_Id"]]], r)
			}
			return by
		}
		dir := run(filepath.Join(rt.Apps, "launch_threads"), "2", "3", module)
		require.Contains(t, codeObjectURIs(t, dir), "memory://", "the module is loaded from the app's memory")
		by := samples(dir)
		require.NotEmpty(t, by["module_fill"])
		require.NotEmpty(t, by["tiny(int*)"])
		for _, r := range by["module_fill"] {
			require.Regexp(t, line, r["Instruction_Comment"], "%v", r)
			require.Contains(t, r["Instruction_Comment"], "testdata/apps/module_kernels.cpp:")
		}
		for _, r := range by["tiny(int*)"] {
			require.Empty(t, r["Instruction_Comment"], "no line table")
		}
		// ROCclr's fill kernel (its code object is in libamdhip64).
		by = samples(run(filepath.Join(rt.Apps, "devices")))
		var blit int
		for name, rs := range by {
			if strings.HasPrefix(name, "__amd_rocclr_") {
				blit += len(rs)
			}
		}
		require.NotZero(t, blit, "samples in ROCclr's blit kernels: %v", by)
	})
}

// codeObjectURIs lists results.json's code-object URIs, one a line.
func codeObjectURIs(t *testing.T, dir string) string {
	t.Helper()
	var doc struct {
		Tool []struct {
			CodeObjects []struct {
				URI string `json:"uri"`
			} `json:"code_objects"`
		} `json:"rocprofiler-sdk-tool"`
	}
	readJSONFile(t, pcsOne(t, dir, "results.json"), &doc)
	var b strings.Builder
	for _, p := range doc.Tool {
		for _, c := range p.CodeObjects {
			b.WriteString(c.URI + "\n")
		}
	}
	return b.String()
}

// pcsJSONCommentsMatchCSV: each host-trap record's inst_index names its CSV
// row's Instruction_Comment in strings.pc_sample_comments.
func pcsJSONCommentsMatchCSV(t *testing.T, dir string, rows []map[string]string) {
	t.Helper()
	var doc struct {
		Tool []struct {
			Strings struct {
				Comments []string `json:"pc_sample_comments"`
			} `json:"strings"`
			BufferRecords struct {
				HostTrap []struct {
					InstIndex int64 `json:"inst_index"`
				} `json:"pc_sample_host_trap"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	readJSONFile(t, pcsOne(t, dir, "results.json"), &doc)
	i := 0
	for _, p := range doc.Tool {
		for _, r := range p.BufferRecords.HostTrap {
			require.Less(t, i, len(rows))
			if r.InstIndex >= 0 {
				require.Equal(t, rows[i]["Instruction_Comment"], p.Strings.Comments[r.InstIndex], "row %d", i)
			}
			i++
		}
	}
	require.Equal(t, len(rows), i, "records: "+strconv.Itoa(i))
}
