package att

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkDispatchWrite measures the Go side of decoding one dispatch:
// aggregating a decoder's records into code.json, the stats CSV, wave,
// wstates and occupancy files. 4 SEs x 16 waves x 2000 instructions over
// the first 40 instructions of vadd (llvm-objdump's disassembly, cached per
// code object as in a run). Reported per instruction record.
func BenchmarkDispatchWrite(b *testing.B) {
	_, file, _, _ := runtime.Caller(0)
	dir := b.TempDir()
	co, err := os.ReadFile(filepath.Join(filepath.Dir(file), "testdata", "multistream_gfx90a.co"))
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(filepath.Join(dir, "x.out"), co, 0o644))
	code := NewCodeObjects(dir, []CodeObject{{ID: 2, LoadBase: testLoadBase, LoadSize: 0x3000, LoadDelta: testLoadBase, File: "x.out"}})
	// The instruction addresses, as the ISA callback would step through them.
	var pcs []PC
	addr := uint64(testLoadBase + 0x1b00)
	for len(pcs) < 40 {
		l, err := code.Instruction(PC{Addr: addr})
		require.NoError(b, err)
		pcs = append(pcs, PC{Addr: addr})
		addr += l.Size
	}
	var ses []*SETrace
	const waves, insts = 16, 2000
	for se := 0; se < 4; se++ {
		tr := &SETrace{SE: se, GFXIP: 9}
		for w := 0; w < waves; w++ {
			wv := Wave{SIMD: uint8(w % 4), WaveID: uint8(w / 4), Begin: int64(w * 10), End: int64(w*10 + insts*12)}
			for i := 0; i < insts; i++ {
				wv.Insts = append(wv.Insts, Inst{Category: 2, Stall: uint32(i % 7), Duration: 8, Time: int64(w*10 + i*12), PC: pcs[i%len(pcs)]})
			}
			for i := 0; i < 50; i++ {
				wv.Timeline = append(wv.Timeline, WaveState{Type: int32(2 + i%3), Duration: 100})
			}
			tr.Waves = append(tr.Waves, wv)
			tr.Occupancy = append(tr.Occupancy, Occupancy{PC: pcs[0], Time: uint64(w * 10), Start: true},
				Occupancy{PC: pcs[0], Time: uint64(w*10 + insts*12)})
		}
		ses = append(ses, tr)
	}
	b.ReportAllocs()
	cpu0 := cpuNs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := &Dispatch{Dir: filepath.Join(dir, "ui_output_agent_1_dispatch_1"), SEs: ses, Code: code}
		require.NoError(b, d.Write())
	}
	b.StopTimer()
	n := float64(b.N * 4 * waves * insts)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "wall-ns/inst")
	// CPU time (user+sys) of the process: the machine is shared, wall time is not ours.
	b.ReportMetric(float64(cpuNs()-cpu0)/n, "cpu-ns/inst")
}

func cpuNs() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
