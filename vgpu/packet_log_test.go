package vgpu

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

type logRecord struct {
	Type       string `json:"type"`
	Queue      uint64 `json:"queue"`
	Name       string `json:"name"`
	Waves      uint64 `json:"waves"`
	StartTS    uint64 `json:"start_ts"`
	EndTS      uint64 `json:"end_ts"`
	DurationNs uint64 `json:"duration_ns"`
	Emulated   string `json:"emulated"`
	Bytes      uint64 `json:"bytes"`
}

func readLog(t *testing.T, path string) []logRecord {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var recs []logRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r logRecord
		require.NoErrorf(t, json.Unmarshal(sc.Bytes(), &r), "bad log line %q", sc.Text())
		recs = append(recs, r)
	}
	require.NoError(t, sc.Err())
	return recs
}

func dispatches(recs []logRecord, name string) []logRecord {
	var out []logRecord
	for _, r := range recs {
		if r.Type == "dispatch" && (name == "" || r.Name == name) {
			out = append(out, r)
		}
	}
	return out
}

const (
	vaddKernel  = "_Z4vaddPKfS0_Pfi"
	scaleKernel = "_Z5scalePffi"
)

func bootNs(t *testing.T) uint64 {
	var ts syscall.Timespec
	const clockBoottime = 7
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0)
	require.Zero(t, e)
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// The packet log names kernels from their code objects, records the ROCclr
// and SDMA copies, and its timestamps are 100 MHz ticks of CLOCK_BOOTTIME.
func TestPacketLogNamesAndTimestamps(t *testing.T) {
	log := filepath.Join(t.TempDir(), "vgpu.jsonl")
	before := bootNs(t)
	r := run(t, time.Minute, []string{"ROCPROF_VGPU_LOG=" + log}, artefact(t, "testdata/multistream"), "2", "3")
	after := bootNs(t)
	require.Equal(t, 0, r.code, r.stderr)
	recs := readLog(t, log)
	require.Len(t, dispatches(recs, vaddKernel), 6)
	require.Len(t, dispatches(recs, scaleKernel), 6)
	require.Len(t, dispatches(recs, "__amd_rocclr_copyBuffer"), 6)
	for _, d := range dispatches(recs, "") {
		require.Greater(t, d.EndTS, d.StartTS, d.Name)
		require.GreaterOrEqual(t, d.StartTS*10, before-10, d.Name)
		require.LessOrEqual(t, d.EndTS*10, after+10, d.Name)
	}
	sdma := 0
	for _, r := range recs {
		if r.Type == "sdma_copy" {
			sdma++
		}
	}
	require.GreaterOrEqual(t, sdma, 12, "H2D and D2H copies go through SDMA")
}

// In virtual-clock mode a kernel lasts exactly 2000 + 8 x waves ns, scaled by
// ROCPROF_VGPU_KERNEL_SCALE for matching names, and timestamps are exact.
func TestVirtualClockAndKernelScale(t *testing.T) {
	log := filepath.Join(t.TempDir(), "vgpu.jsonl")
	r := run(t, time.Minute, []string{"ROCPROF_VGPU_LOG=" + log, "ROCPROF_VGPU_CLOCK=virtual",
		"ROCPROF_VGPU_KERNEL_SCALE=*scale*=10"}, artefact(t, "testdata/multistream"), "1", "2", "65536")
	require.Equal(t, 0, r.code, r.stderr)
	recs := readLog(t, log)
	waves := uint64(65536 / 256 * 4)
	for _, d := range dispatches(recs, vaddKernel) {
		require.Equal(t, waves, d.Waves)
		require.Equal(t, 2000+8*waves, d.DurationNs)
		require.Equal(t, d.DurationNs/10, d.EndTS-d.StartTS)
	}
	scaled := dispatches(recs, scaleKernel)
	require.Len(t, scaled, 2)
	for _, d := range scaled {
		require.Equal(t, 10*(2000+8*waves), d.DurationNs)
		require.Equal(t, d.DurationNs/10, d.EndTS-d.StartTS)
	}
}

// A rule with @GRIDX scales only the dispatches of that grid size: one
// launch shape of a kernel (what compare's sensitivity benchmark slows).
func TestKernelScaleByGridSize(t *testing.T) {
	log := filepath.Join(t.TempDir(), "vgpu.jsonl")
	r := run(t, time.Minute, []string{"ROCPROF_VGPU_LOG=" + log, "ROCPROF_VGPU_CLOCK=virtual",
		"ROCPROF_VGPU_KERNEL_SCALE=*scale*@1024=10;*vadd*@65536=1.5"}, artefact(t, "testdata/multistream"), "1", "2", "65536")
	require.Equal(t, 0, r.code, r.stderr)
	recs := readLog(t, log)
	waves := uint64(65536 / 256 * 4)
	vadd := dispatches(recs, vaddKernel)
	require.Len(t, vadd, 2)
	for _, d := range vadd {
		require.Equal(t, uint64(1.5*float64(2000+8*waves)), d.DurationNs, "vadd's grid is 65536")
	}
	for _, d := range dispatches(recs, scaleKernel) {
		require.Equal(t, 2000+8*waves, d.DurationNs, "scale's grid is not 1024")
	}
	bad := run(t, time.Minute, []string{"ROCPROF_VGPU_KERNEL_SCALE=*scale*@x=2"}, artefact(t, "testdata/multistream"), "1", "1", "1024")
	require.NotEqual(t, 0, bad.code)
	require.Contains(t, bad.stderr, "after @ give the grid size in work-items")
}
