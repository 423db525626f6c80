package rocprof_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// pmcGoldenCase is what the packet test needs of an AQLprofile PMC golden.
type pmcGoldenCase struct {
	name         string
	pmc          []string // the counters that make its event list, in its order
	start, stop  []uint32
	read         []uint32
	outputBuffer uint64
}

// hiresExtra defines, for -E, the counter whose one event is the golden
// sq_level_waves_accum_hires case's: SQ_LEVEL_WAVES accumulated at high
// resolution (no shipped counter is that alone).
const hiresExtra = `rocprofiler-sdk:
  counters-schema-version: 1
  counters:
    - name: SQ_LEVEL_WAVES_HIRES
      description: SQ_LEVEL_WAVES accumulated at high resolution (test counter).
      properties: []
      definitions:
        - architectures: [gfx942]
          expression: accumulate(SQ_LEVEL_WAVES, HIGH_RES)
`

// loadPMCGoldens reads every pmc_* case of an AQLprofile golden directory.
func loadPMCGoldens(t *testing.T, repo, label string) []pmcGoldenCase {
	files, err := filepath.Glob(filepath.Join(repo, "..", "shared", "golden", "aqlprofile", label, "pmc_*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the AQLprofile goldens must be at ../shared/golden/aqlprofile beside the checkout")
	var cases []pmcGoldenCase
	for _, f := range files {
		var g struct {
			Set    string `json:"set"`
			Out    string `json:"output_buffer_addr"`
			Events []struct {
				Counter string `json:"counter"`
				Index   int    `json:"block_index"`
				Flags   int    `json:"flags_raw"`
			} `json:"events"`
			Packets []struct {
				Name string   `json:"name"`
				PM4  []string `json:"pm4"`
			} `json:"packets"`
		}
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &g), f)
		c := pmcGoldenCase{name: g.Set}
		c.outputBuffer, err = strconv.ParseUint(g.Out, 0, 64)
		require.NoError(t, err)
		for _, e := range g.Events {
			switch e.Flags {
			case 0:
				c.pmc = append(c.pmc, fmt.Sprintf("%s[%d]", e.Counter, e.Index))
			case 2:
				require.Equal(t, "SQ_LEVEL_WAVES", e.Counter, "%s: a HI_RES event hiresExtra does not define", f)
				c.pmc = append(c.pmc, "SQ_LEVEL_WAVES_HIRES")
			default:
				t.Fatalf("%s: event flags %d", f, e.Flags)
			}
		}
		for _, p := range g.Packets {
			dw := make([]uint32, len(p.PM4))
			for i, s := range p.PM4 {
				v, err := strconv.ParseUint(s, 0, 32)
				require.NoError(t, err)
				dw[i] = uint32(v)
			}
			switch p.Name {
			case "start":
				c.start = dw
			case "stop":
				c.stop = dw
			case "read":
				c.read = dw
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// eachPacket calls f with the opcode and body of every type-3 packet of ib.
func eachPacket(t *testing.T, ib []uint32, f func(op pm4.Opcode, body []uint32)) {
	for i := 0; i < len(ib); {
		h := ib[i]
		require.Equal(t, uint32(3), h>>30, "dword %d: a type-3 packet", i)
		n := int(h>>16&0x3fff) + 2
		require.LessOrEqual(t, i+n, len(ib), "dword %d: the packet ends inside the buffer", i)
		f(pm4.Opcode(h>>8&0xff), ib[i+1:i+n])
		i += n
	}
}

// toMemory tells a COPY_DATA whose destination is memory.
func toMemory(body []uint32) bool {
	switch pm4.CopySel(body[0] >> 8 & 0xf) {
	case pm4.SelMemory, pm4.SelTCL2, pm4.SelImmOrMem:
		return true
	}
	return false
}

// firstOutput is the destination of a read IB's first COPY_DATA to memory.
func firstOutput(t *testing.T, ib []uint32) uint64 {
	var a uint64
	eachPacket(t, ib, func(op pm4.Opcode, body []uint32) {
		if a == 0 && op == pm4.OpCopyData && toMemory(body) {
			a = uint64(body[4])<<32 | uint64(body[3])
		}
	})
	require.NotZero(t, a, "the read packet writes memory")
	return a
}

// relocateRead moves a read IB's output-buffer addresses (COPY_DATA to
// memory, ACQUIRE_MEM's base) from one buffer to another: AQLprofile's
// goldens place the output buffer at 0x100000000000, the profiler where
// the runtime gives it memory.
func relocateRead(t *testing.T, ib []uint32, from, to uint64) []uint32 {
	out := slices.Clone(ib)
	eachPacket(t, out, func(op pm4.Opcode, body []uint32) {
		switch op {
		case pm4.OpCopyData:
			if toMemory(body) {
				a := uint64(body[4])<<32 | uint64(body[3]) - from + to
				body[3], body[4] = uint32(a), uint32(a>>32)
			}
		case pm4.OpAcquireMem: // gfx9's 7-dword form: base >> 8 in dwords 4 and 5
			require.Zero(t, to%256, "the output buffer 256-byte aligned, as the golden's: the same ACQUIRE_MEM size")
			require.Equal(t, uint32(from>>8), body[3])
			body[3], body[4] = uint32(to>>8), uint32(to>>40)&0xff
		}
	})
	return out
}

// vgpuIB is one PM4 indirect buffer the virtual GPU's command processor ran
// (a pm4_ib record of ROCPROF_VGPU_LOG).
type vgpuIB struct {
	addr uint64
	dw   []uint32
}

// vgpuPackets reads a virtual GPU log: per process, in the order they
// appear, the PM4 buffers around each kernel dispatch (the AQL packets just
// before it and the two just after it on its queue: the profiler's start,
// stop and read), and the virtual GPU's errors.
func vgpuPackets(t *testing.T, path string) (pids []int, around map[int][][3]vgpuIB, errs []string) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	type key struct {
		pid, queue int
		index      uint64
	}
	ibs := map[key]vgpuIB{}
	var dispatches []key
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct {
			Type  string `json:"type"`
			PID   int    `json:"pid"`
			Queue int    `json:"queue"`
			Index uint64 `json:"index"`
			Addr  uint64 `json:"ib_addr"`
			IB    string `json:"ib"`
			Msg   string `json:"message"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		k := key{r.PID, r.Queue, r.Index}
		switch r.Type {
		case "pm4_ib":
			b, err := hex.DecodeString(r.IB)
			require.NoError(t, err)
			ib := vgpuIB{addr: r.Addr, dw: make([]uint32, len(b)/4)}
			for i := range ib.dw {
				v, _ := strconv.ParseUint(r.IB[8*i:8*i+8], 16, 32)
				ib.dw[i] = uint32(v)
			}
			ibs[k] = ib
		case "dispatch":
			dispatches = append(dispatches, k)
		case "error": // with a log, the virtual GPU's errors go there only
			errs = append(errs, r.Msg)
		}
	}
	require.NoError(t, sc.Err())
	around = map[int][][3]vgpuIB{}
	for _, d := range dispatches {
		if !slices.Contains(pids, d.pid) {
			pids = append(pids, d.pid)
		}
		start, ok1 := ibs[key{d.pid, d.queue, d.index - 1}]
		stop, ok2 := ibs[key{d.pid, d.queue, d.index + 1}]
		read, ok3 := ibs[key{d.pid, d.queue, d.index + 2}]
		if ok1 && ok2 && ok3 {
			around[d.pid] = append(around[d.pid], [3]vgpuIB{start, stop, read})
		}
	}
	return pids, around, errs
}

// On every runtime that knows gfx942, the PMC packets the profiler injects
// for the virtual MI300X (8 XCCs of 4 SEs), as the virtual GPU's command
// processor receives them, are AQLprofile's for every pmc_* case of the
// shared MI300X goldens: the start and stop buffers byte for byte, the read
// buffer byte for byte once the golden's output-buffer addresses are moved
// to the profiler's buffer. Each case is one pass (-i, one pmc: line per
// case) whose counters make the golden's event list, for every counted
// dispatch of the app.
func TestPMCPacketsAreAQLprofilesOnGfx942(t *testing.T) {
	repo, rts := matrix(t)
	libEnv(t)
	cases := loadPMCGoldens(t, repo, "gfx942_mi300x")
	require.Len(t, cases, 10, "every pmc_* case of the MI300X goldens")
	dir := t.TempDir()
	input := filepath.Join(dir, "passes.txt")
	extra := filepath.Join(dir, "extra.yaml")
	var lines []string
	for _, c := range cases {
		lines = append(lines, "pmc: "+strings.Join(c.pmc, " "))
	}
	require.NoError(t, os.WriteFile(input, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(extra, []byte(hiresExtra), 0o644))
	ran := 0
	for _, rt := range rts {
		if rt.Name == rocmmatrix.HostName {
			continue // ROCR 5.2.3 does not know gfx942
		}
		ran++
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			log := filepath.Join(t.TempDir(), "vgpu.log")
			t.Setenv("ROCPROF_VGPU_LOG", log)
			argv := matrixApp(repo, rt, "1", "1")
			argv[slices.Index(argv, filepath.Join(rt.Apps, "multistream"))] = filepath.Join(rt.Apps, "gfx942", "multistream")
			var stdout, stderr strings.Builder
			res, err := rocprof.Run(context.Background(), rocprof.Options{
				Args:   []string{"--virtual-gpu=gfx942", "-i", input, "-E", extra, "-f", "csv", "-d", t.TempDir(), "-o", "run"},
				Stdout: &stdout, Stderr: &stderr,
			}, argv)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitStatus, "stderr:\n%s", stderr.String())
			noVGPUError(t, rt.Name, stderr.String())
			pids, around, errs := vgpuPackets(t, log)
			require.Zero(t, len(errs), "ROCm %s: %d errors of the virtual GPU, the first: %s", rt.Name, len(errs), strings.Join(errs[:min(1, len(errs))], ""))
			require.Len(t, pids, len(cases), "one app process per pass")
			compared := 0
			for i, c := range cases {
				sets := around[pids[i]]
				compared += len(sets)
				dispatches := multistreamDispatches(t, multistreamLine.FindAllString(stdout.String(), -1)[i])
				require.GreaterOrEqual(t, len(sets), dispatches, "ROCm %s, %s: every counted dispatch between a start packet and a stop and read packet", rt.Name, c.name)
				for j, s := range sets {
					what := fmt.Sprintf("ROCm %s, %s (%s), dispatch %d", rt.Name, c.name, strings.Join(c.pmc, " "), j+1)
					requireSamePM4(t, what+": start", c.start, s[0].dw)
					requireSamePM4(t, what+": stop", c.stop, s[1].dw)
					require.NotEmpty(t, s[2].dw)
					// The profiler's output buffer: its first sample where the golden's is.
					out := c.outputBuffer + firstOutput(t, s[2].dw) - firstOutput(t, c.read)
					requireSamePM4(t, what+": read", relocateRead(t, c.read, c.outputBuffer, out), s[2].dw)
				}
			}
			t.Logf("ROCm %s: %d cases, %d start/stop/read sets equal to AQLprofile's", rt.Name, len(cases), compared)
		})
	}
	require.Positive(t, ran, "a runtime that knows gfx942")
}

// requireSamePM4 compares two PM4 buffers, showing both disassemblies when
// they differ.
func requireSamePM4(t *testing.T, what string, want, got []uint32) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	require.Equal(t, pm4.Format(want, nil), pm4.Format(got, nil), "%s differs from AQLprofile's", what)
	require.Equal(t, want, got, "%s differs from AQLprofile's", what)
}
