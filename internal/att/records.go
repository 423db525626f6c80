package att

import (
	"os"
	"path/filepath"
)

// LibraryName is the decoder library's file name, as rocprofv3 looks for it.
const LibraryName = "librocprof-trace-decoder.so"

// Record types (rocprofiler_thread_trace_decoder_record_type_t).
const (
	recGFXIP = iota
	recOccupancy
	recPerfEvent
	recWave
	recInfo
	recDebug
	recShaderData
	recRealtime
	recRTFrequency
)

// Decoder status codes (rocprofiler_thread_trace_decoder_status_t).
const (
	statusSuccess          = 0
	statusError            = 1
	statusOutOfResources   = 2
	statusInvalidArgument  = 3
	statusInvalidShaderDat = 4
)

// PC is a program counter as the decoder reports it: an ELF virtual address
// inside code object CodeObj, or a raw address when CodeObj is 0.
type PC struct {
	Addr    uint64
	CodeObj uint64
}

// Occupancy is a wave start or end.
type Occupancy struct {
	PC               PC
	Time             uint64
	CU, SIMD, WaveID uint8
	Start            bool
}

// PerfEvent is one sample of four streamed SQ counters (bank 0: counters
// 0-3, bank 1: 4-7).
type PerfEvent struct {
	Time     int64
	Events   [4]uint16
	CU, Bank uint8
}

// WaveState is one span of a wave's timeline (type: 0 empty, 1 idle, 2
// exec, 3 wait, 4 stall).
type WaveState struct {
	Type, Duration int32
}

// Inst is one executed instruction.
type Inst struct {
	Category uint8
	Stall    uint32
	Duration int32
	Time     int64
	PC       PC
}

// Wave is one traced wave (target CU and SIMDs only).
type Wave struct {
	CU, SIMD, WaveID, Contexts uint8
	Begin, End                 int64
	Timeline                   []WaveState
	Insts                      []Inst
}

// ShaderData is a value a shader wrote into the trace (s_ttracedata).
type ShaderData struct {
	Time                    int64
	Value                   uint64
	CU, SIMD, WaveID, Flags uint8
}

// Realtime pairs the shader clock with the realtime clock.
type Realtime struct {
	ShaderClock int64
	Realtime    uint64
}

// SETrace is everything the decoder returned for one shader engine's data.
type SETrace struct {
	SE          int
	GFXIP       int
	Occupancy   []Occupancy
	Perf        []PerfEvent
	Waves       []Wave
	ShaderData  []ShaderData
	Realtime    []Realtime
	RTFrequency uint64
	Infos       []string
}

// Line is one disassembled instruction for the decoder.
type Line struct {
	Text    string
	Size    uint64 // bytes to the next instruction
	Comment string // source reference, "" when unknown
}

// ISA answers the decoder's instruction requests.
type ISA interface {
	Instruction(pc PC) (Line, error)
}

// Find looks for the decoder as rocprofv3 does: in each directory of dirs
// (--att-library-path / ROCPROF_ATT_LIBRARY_PATH), then LD_LIBRARY_PATH, then
// /opt/rocm/lib. It returns "" when it is nowhere.
func Find(dirs []string, ldLibraryPath string) string {
	var all []string
	all = append(all, dirs...)
	all = append(all, filepath.SplitList(ldLibraryPath)...)
	all = append(all, "/opt/rocm/lib")
	for _, d := range all {
		if d == "" {
			continue
		}
		p := filepath.Join(d, LibraryName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}
