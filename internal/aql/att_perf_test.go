package aql

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// Streamed SQ counters on gfx9 (no AQLprofile golden covers them: the
// sequence follows AQLprofile's SQTT builder, registers from the gfx9 PMC
// goldens and the gc_9 SQ_THREAD_TRACE block): programmed after the trace
// mask and before the token mask, which gains the perf-counter token; the
// stop packet stops the CP perfmon and the RLC clock after the mode-off.
func TestATTPerfCountersGfx9(t *testing.T) {
	d, err := ParseAgent("gfx90a")
	require.NoError(t, err)
	cfg := RocprofATTConfig()
	require.NoError(t, cfg.Apply(ATTPerfcounterName, 4))           // SQ_WAVES, all SIMDs
	require.NoError(t, cfg.Apply(ATTPerfcounterName, 0x3|0x3<<24)) // SQ_BUSY_CYCLES, SIMDs 0-1
	require.NoError(t, cfg.Apply(ATTPerfcounterCtrl, 3))           // period 4
	require.True(t, cfg.PerfCountersOn(GFX9))
	p, err := d.BuildATT(cfg, (&Arena{Next: 0x100000000000}).Alloc)
	require.NoError(t, err)
	start := pm4.Format(p.Start.DW, d.RegName)
	want := []string{
		"SQ_THREAD_TRACE_MASK(0xc332) = 0x0000cf81",
		"RLC_PERFMON_CLK_CNTL(0xdcbf) = 0x00000001",
		"COMPUTE_PERFCOUNT_ENABLE(0x2e0b) = 0x00000001",
		"CP_PERFMON_CNTL(0xd808) = 0x00000000",
		"SQ_PERFCOUNTER0_SELECT(0xd9c0) = 0x0f000004",
		"SQ_PERFCOUNTER1_SELECT(0xd9c1) = 0x03000003",
		"SQ_PERFCOUNTER2_SELECT(0xd9c2) = 0x00000000",
		"SQ_PERFCOUNTER7_SELECT(0xd9c7) = 0x00000000",
		"SQ_THREAD_TRACE_PERF_MASK(0xc334) = 0xffffffff",
		"SQ_PERFCOUNTER_MASK(0xd9e1) = 0xffffffff",
		"SQ_PERFCOUNTER_CTRL(0xd9e0) = 0xffff037f",
		"CP_PERFMON_CNTL(0xd808) = 0x00000001",
		"SQ_THREAD_TRACE_TOKEN_MASK(0xc333) = 0x000ffc6f",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(start[at:], w)
		require.GreaterOrEqual(t, i, 0, "start lacks %q after offset %d:\n%s", w, at, start)
		at += i
	}
	stop := pm4.Format(p.Stop.DW, d.RegName)
	at = 0
	for _, w := range []string{"SQ_THREAD_TRACE_MODE(0xc336) = 0x02040000", "CP_PERFMON_CNTL(0xd808) = 0x00000002",
		"CP_PERFMON_CNTL(0xd808) = 0x00000000", "RLC_PERFMON_CLK_CNTL(0xdcbf) = 0x00000000", "WAIT_REG_MEM"} {
		i := strings.Index(stop[at:], w)
		require.GreaterOrEqual(t, i, 0, "stop lacks %q after offset %d:\n%s", w, at, stop)
		at += i
	}

	// Without a period (rocprofv3's default 0) the counters are not programmed.
	plain := RocprofATTConfig()
	plain.PerfCounters = cfg.PerfCounters
	q, err := d.BuildATT(plain, (&Arena{Next: 0x100000000000}).Alloc)
	require.NoError(t, err)
	require.NotContains(t, pm4.Format(q.Start.DW, d.RegName), "SQ_PERFCOUNTER0_SELECT")

	// An event the SQ does not have is refused.
	bad := cfg
	bad.PerfCounters = []ATTPerfCounter{{Event: 0xFFFFF}}
	_, err = d.BuildATT(bad, (&Arena{Next: 0x100000000000}).Alloc)
	require.ErrorContains(t, err, "beyond")
}

// From gfx10 on AQLprofile ignores streamed counters: the packets are the
// plain ones, byte for byte.
func TestATTPerfCountersIgnoredAfterGfx9(t *testing.T) {
	d, err := ParseAgent("gfx1100")
	require.NoError(t, err)
	cfg := RocprofATTConfig()
	cfg.BufferSize = 0x4000000
	plain, err := d.BuildATT(cfg, (&Arena{Next: 0x100000000000}).Alloc)
	require.NoError(t, err)
	cfg.PerfCounters, cfg.PerfPeriod = []ATTPerfCounter{{Event: 4}}, 8
	require.False(t, cfg.PerfCountersOn(d.Family))
	with, err := d.BuildATT(cfg, (&Arena{Next: 0x100000000000}).Alloc)
	require.NoError(t, err)
	require.Equal(t, plain.CmdBuf, with.CmdBuf)
}

func TestATTPerfParameters(t *testing.T) {
	cfg := RocprofATTConfig()
	require.ErrorContains(t, cfg.Apply(ATTPerfcounterCtrl, 32), "out of range")
	for i := 0; i < MaxATTPerfCounters; i++ {
		require.NoError(t, cfg.Apply(ATTPerfcounterName, uint64(i)))
	}
	require.ErrorContains(t, cfg.Apply(ATTPerfcounterName, 9), "at most 8")
	require.NoError(t, cfg.Apply(ATTPerfcounterMask, 0xFF))
	require.Equal(t, uint32(0xFF), cfg.perfMask())
}
