package vgpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Addresses the pm4_ib driver maps: a data page and a page for a nested IB.
const (
	dataAddr uint64 = 0x200000000000
	ib2Addr  uint64 = 0x200000001000
)

func lo(a uint64) uint32 { return uint32(a) }
func hi(a uint64) uint32 { return uint32(a >> 32) }

func pkt3(op uint32, body ...uint32) []uint32 {
	return append([]uint32{3<<30 | uint32(len(body)-1)<<16 | op<<8}, body...)
}

func writeData(addr uint64, data ...uint32) []uint32 {
	return pkt3(0x37, append([]uint32{5 << 8, uint32(addr), uint32(addr >> 32)}, data...)...)
}

func cat(parts ...[]uint32) []uint32 {
	var out []uint32
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func runIB(t *testing.T, ib, ib2 []uint32) (data []uint32, errs []string) {
	var args []string
	for _, d := range ib {
		args = append(args, fmt.Sprintf("%08x", d))
	}
	if ib2 != nil {
		args = append(args, "--")
		for _, d := range ib2 {
			args = append(args, fmt.Sprintf("%08x", d))
		}
	}
	log := filepath.Join(t.TempDir(), "vgpu.jsonl")
	r := run(t, time.Minute, []string{"ROCPROF_VGPU_LOG=" + log}, artefact(t, "vgpu-tests/pm4_ib"), args...)
	require.Equalf(t, 0, r.code, "stderr: %s", r.stderr)
	for _, f := range strings.Fields(r.stdout) {
		v, err := strconv.ParseUint(f, 16, 32)
		require.NoError(t, err)
		data = append(data, uint32(v))
	}
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, `"type":"error"`) {
			errs = append(errs, line)
		}
	}
	return data, errs
}

// The PM4 interpreter executes what it knows and reports, never skips
// silently, what it does not.
func TestPM4Interpreter(t *testing.T) {
	cases := []struct {
		name string
		ib   []uint32
		ib2  []uint32
		want map[int]uint32 // data dword index -> value
		errs []string       // substrings of expected error records
	}{
		{name: "write-data", ib: writeData(dataAddr, 1, 2, 3), want: map[int]uint32{0: 1, 1: 2, 2: 3}},
		{name: "copy-data-immediate", ib: pkt3(0x40, 5|5<<8, 0xabcd, 0, lo(dataAddr+8), hi(dataAddr)),
			want: map[int]uint32{2: 0xabcd}},
		{name: "pred-exec-selected", ib: cat(pkt3(0x23, 1<<24|6), writeData(dataAddr, 7, 8)),
			want: map[int]uint32{0: 7, 1: 8}},
		{name: "pred-exec-other-xcc", ib: cat(pkt3(0x23, 2<<24|6), writeData(dataAddr, 7, 8), writeData(dataAddr+8, 9)),
			want: map[int]uint32{0: 0, 1: 0, 2: 9}},
		{name: "nested-ib", ib: pkt3(0x3f, lo(ib2Addr), hi(ib2Addr), 5|1<<23), ib2: writeData(dataAddr+4, 0x55),
			want: map[int]uint32{1: 0x55}},
		{name: "register-round-trip", ib: cat(
			pkt3(0x79, 0x200, 0xe0000000),                             // GRBM_GFX_INDEX broadcast
			pkt3(0x79, 0x19c0, 0x0f0ff004),                            // SQ_PERFCOUNTER0_SELECT = SQ_WAVES
			pkt3(0x40, 0|5<<8, 0xd9c0, 0, lo(dataAddr), hi(dataAddr)), // read it back
		), want: map[int]uint32{0: 0x0f0ff004}},
		{name: "wait-reg-mem-satisfied", ib: cat(writeData(dataAddr, 5),
			pkt3(0x3c, 3|1<<4, lo(dataAddr), hi(dataAddr), 5, 0xffffffff, 4), writeData(dataAddr+4, 6)),
			want: map[int]uint32{0: 5, 1: 6}},
		{name: "gpu-clock", ib: pkt3(0x40, 9|5<<8|1<<16, 0, 0, lo(dataAddr), hi(dataAddr))},
		{name: "unknown-opcode", ib: cat(pkt3(0x99, 0), writeData(dataAddr, 4)),
			want: map[int]uint32{0: 4}, errs: []string{"unknown opcode 0x99"}},
		{name: "unknown-register", ib: pkt3(0x79, 0xfff, 1), errs: []string{"unknown register 0xcfff"}},
		{name: "truncated", ib: []uint32{3<<30 | 5<<16 | 0x37<<8, 0}, errs: []string{"runs past the end"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, errs := runIB(t, c.ib, c.ib2)
			for i, v := range c.want {
				require.Equalf(t, v, data[i], "data dword %d", i)
			}
			if c.name == "gpu-clock" {
				require.NotZero(t, uint64(data[0])|uint64(data[1])<<32)
			}
			if len(c.errs) == 0 {
				require.Empty(t, errs)
			}
			for _, e := range c.errs {
				require.Contains(t, strings.Join(errs, "\n"), e)
			}
		})
	}
}
