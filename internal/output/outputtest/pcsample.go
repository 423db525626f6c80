package outputtest

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// FakePCInstructions names an instruction by its offset ("s_nop 0x10");
// a PC in no code object is unknown.
type FakePCInstructions struct{}

func (FakePCInstructions) Text(s *model.PCSample) (string, bool) {
	if s.CodeObjectID == 0 {
		return "", false
	}
	return fmt.Sprintf("s_nop %#x", s.Offset), true
}
func (FakePCInstructions) Comment(s *model.PCSample) string {
	if s.CodeObjectID == 0 {
		return ""
	}
	return fmt.Sprintf("k.cpp:%d", s.Offset)
}
func (FakePCInstructions) NoObjdump() bool { return false }
func (FakePCInstructions) Close()          {}

// PCSampleHWID is the HW_ID of the PC-sample fixture's first samples:
// wave 3, SIMD 2, pipe 1, CU 5, SA 1, SE 3, TG 4, VM 6, queue 2, ME 1.
const PCSampleHWID = uint32(3 | 2<<4 | 1<<6 | 5<<8 | 1<<12 | 3<<13 | 4<<16 | 6<<20 | 2<<24 | 1<<30)

// PCSampleSpool writes one process (pid 100, Emit's 4 iterations) with
// host-trap PC samples and returns its spool. Emit's dispatches: 1
// (agent 1, vectorAdd, 100,002,000-100,002,100 ns, correlation 1), 2
// (agent 2, scan_kernel, 100,012,000-100,012,150, correlation 3), 4
// (agent 2, vectorAdd, 100,032,000-100,032,250, correlation 7); code
// object 1 is loaded at 0x7f0000000000. The samples, in order:
//
//	dispatch 1: offsets 0x10, 0x20, 0x10, PC 0x1234 (no code object),
//	            0x10, 0x20 at 100,002,050; exec mask all ones, workgroup
//	            (7, 1, 2), chiplet 2, wave 5, PCSampleHWID
//	dispatch 2: offset 0x30 at 100,012,100, exec mask 0xf, other fields 0
//	dispatch 4: offsets 0x10, 0x40 at 100,032,100, exec mask 0xff
//
// So vectorAdd has 8 samples (0x10: 4, 0x20: 2, 0x40: 1, unknown: 1) and
// scan_kernel 1 (0x30).
func PCSampleSpool(t testing.TB, dir string) string {
	path, err := pcSampleBuilder().WriteFile(dir)
	require.NoError(t, err)
	return path
}

// PCSampleRenameRange is the ROCTx range message PCSampleRenameSpool's
// dispatch 4 is launched in.
const PCSampleRenameRange = "phase 2"

// PCSampleRenameSpool is PCSampleSpool's process with a roctxRangePush /
// Pop pair, PCSampleRenameRange, on thread 101 around the launch of
// dispatch 4 (vectorAdd, correlation id 7): push at correlation id 5, pop
// at 9. With --kernel-rename that dispatch, and its 2 samples, take the
// range's name; dispatch 1 (vectorAdd, thread 100) keeps its kernel's, and
// dispatch 2 (scan_kernel, thread 101, correlation id 3) takes "checkpoint",
// the message of Emit's roctxMarkA on thread 101 (correlation id 0), as
// rocprofv3 names a dispatch after a mark.
func PCSampleRenameSpool(t testing.TB, dir string) string {
	b := pcSampleBuilder()
	b.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange, TID: 101,
		CorrelationID: 5, RangeID: 9, Start: 100_025_000, End: 100_035_000, Message: []byte(PCSampleRenameRange)})
	path, err := b.WriteFile(dir)
	require.NoError(t, err)
	return path
}

func pcSampleBuilder() *spooltest.Builder {
	b := spooltest.New(Info(100))
	Emit(100, 4, b.Add)
	trap := func(slot uint64) uint64 { return tracing.TrapID(0x7f0000000408, slot, 1024) }
	b.Add(tracing.PCSampleDispatch{DispatchID: 1, TrapID: trap(5), AgentNode: 1})
	b.Add(tracing.PCSampleDispatch{DispatchID: 2, TrapID: trap(9), AgentNode: 2})
	b.Add(tracing.PCSampleDispatch{DispatchID: 4, TrapID: trap(12), AgentNode: 2})
	var raw []byte
	for _, pc := range []uint64{0x7f0000000010, 0x7f0000000020, 0x7f0000000010, 0x1234, 0x7f0000000010, 0x7f0000000020} {
		raw = tracing.PCSample{PC: pc, ExecMask: ^uint64(0), Workgroup: [3]uint32{7, 1, 2}, ChipletWave: 2<<8 | 5,
			HWID: PCSampleHWID, Timestamp: 100_002_050, CorrelationID: trap(5)}.Encode(raw)
	}
	b.Add(tracing.PCSampleBatch{AgentNode: 1, Samples: raw})
	raw = tracing.PCSample{PC: 0x7f0000000030, ExecMask: 0xf, Timestamp: 100_012_100, CorrelationID: trap(9)}.Encode(nil)
	for _, pc := range []uint64{0x7f0000000010, 0x7f0000000040} {
		raw = tracing.PCSample{PC: pc, ExecMask: 0xff, Timestamp: 100_032_100, CorrelationID: trap(12)}.Encode(raw)
	}
	b.Add(tracing.PCSampleBatch{AgentNode: 2, Samples: raw})
	return b
}

// PCSampleInput is PCSampleSpool's process as a writer's input, its
// instructions named by FakePCInstructions.
func PCSampleInput(t testing.TB) *model.Input {
	in := &model.Input{Spools: []string{PCSampleSpool(t, t.TempDir())}}
	in.Config.PCInstructions = func(*model.PCSamples) model.PCInstructions { return FakePCInstructions{} }
	return in
}

// Snapshot builds a valid gfx9 perf_snapshot_data word: issued, the gfx9
// instruction type code (0 VALU, 2 SCALAR, ...) and not-issued reason code
// (1 ALU_DEPENDENCY, 2 WAITCNT, ...).
func Snapshot(issued bool, typ, reason uint32) uint32 {
	d := uint32(1) | typ<<3 | reason<<7
	if issued {
		d |= 2
	}
	return d
}

// PCSampleStochasticSpool is PCSampleSpool's process sampled
// stochastically: dispatch 1 (vectorAdd) at offsets
//
//	0x10: issued VALU; not issued WAITCNT, WAITCNT, ALU_DEPENDENCY
//	0x20: not issued WAITCNT, WAITCNT
//
// and dispatch 2 (scan_kernel) at 0x30, issued SCALAR; every sample's
// wave count 12, exec mask 0xffff, at 100,002,050 and 100,012,100.
func PCSampleStochasticSpool(t testing.TB, dir string) string {
	b := spooltest.New(Info(100))
	Emit(100, 4, b.Add)
	trap := func(slot uint64) uint64 { return tracing.TrapID(0x7f0000000408, slot, 1024) }
	b.Add(tracing.PCSampleDispatch{DispatchID: 1, TrapID: trap(5), AgentNode: 1})
	b.Add(tracing.PCSampleDispatch{DispatchID: 2, TrapID: trap(9), AgentNode: 2})
	var raw []byte
	for _, s := range []struct {
		off  uint64
		snap uint32
	}{{0x10, Snapshot(true, 0, 0)}, {0x10, Snapshot(false, 0, 2)}, {0x20, Snapshot(false, 0, 2)},
		{0x10, Snapshot(false, 0, 2)}, {0x10, Snapshot(false, 0, 1)}, {0x20, Snapshot(false, 0, 2)}} {
		raw = tracing.PCSample{PC: 0x7f0000000000 + s.off, ExecMask: 0xffff, HWID: PCSampleHWID,
			Snapshot: [3]uint32{s.snap, 12, 0}, Timestamp: 100_002_050, CorrelationID: trap(5)}.Encode(raw)
	}
	b.Add(tracing.PCSampleBatch{AgentNode: 1, Method: tracing.PCSamplingStochastic, Samples: raw})
	raw = tracing.PCSample{PC: 0x7f0000000030, ExecMask: 0xffff, Snapshot: [3]uint32{Snapshot(true, 2, 0), 12, 0},
		Timestamp: 100_012_100, CorrelationID: trap(9)}.Encode(nil)
	b.Add(tracing.PCSampleBatch{AgentNode: 2, Method: tracing.PCSamplingStochastic, Samples: raw})
	path, err := b.WriteFile(dir)
	require.NoError(t, err)
	return path
}

// PerfettoInstant is an instant event as a trace's importer sees it: its
// track's name, time, category, name and debug annotations (values as
// text).
type PerfettoInstant struct {
	Track, Category, Name string
	TS                    uint64
	Args                  map[string]string
}

// PerfettoInstants replays a trace's packets in order, resolving interned
// names as an importer does (an iid must be interned before its use), and
// returns the instant events.
func PerfettoInstants(t *testing.T, trace []byte) []PerfettoInstant {
	const (
		debugNameIID = 1
		debugUint    = 3
		debugString  = 6
	)
	interned := map[protowire.Number]map[uint64]string{pfInternedCategories: {}, pfInternedNames: {}, pfInternedAnnNames: {}}
	tracks := map[uint64]string{}
	var out []PerfettoInstant
	pbFields(t, trace, func(_ protowire.Number, _ protowire.Type, _ uint64, pkt []byte) {
		var ts uint64
		var ev []byte
		pbFields(t, pkt, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
			switch num {
			case pfPacketTimestamp:
				ts = v
			case pfPacketInternedData:
				pbFields(t, sub, func(table protowire.Number, _ protowire.Type, _ uint64, sub []byte) {
					iid, name := internedEntry(t, sub)
					if m := interned[table]; m != nil {
						m[iid] = name
					}
				})
			case pfPacketTrackDescriptor:
				var uuid uint64
				var name string
				pbFields(t, sub, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
					if num == pfTrackUUID {
						uuid = v
					} else if num == pfTrackName {
						name = string(sub)
					}
				})
				tracks[uuid] = name
			case pfPacketTrackEvent:
				ev = sub
			}
		})
		if ev == nil {
			return
		}
		lookup := func(table protowire.Number, iid uint64) string {
			s, ok := interned[table][iid]
			require.True(t, ok, "iid %d of table %d used before it was interned", iid, table)
			return s
		}
		var typ, track uint64
		in := PerfettoInstant{TS: ts, Args: map[string]string{}}
		pbFields(t, ev, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
			switch num {
			case pfEventType:
				typ = v
			case pfEventTrackUUID:
				track = v
			case pfEventCategoryIIDs:
				in.Category = lookup(pfInternedCategories, v)
			case pfEventNameIID:
				in.Name = lookup(pfInternedNames, v)
			case pfEventDebug:
				var name, val string
				pbFields(t, sub, func(num protowire.Number, _ protowire.Type, v uint64, sub []byte) {
					switch num {
					case debugNameIID:
						name = lookup(pfInternedAnnNames, v)
					case debugUint:
						val = strconv.FormatUint(v, 10)
					case debugString:
						val = string(sub)
					}
				})
				in.Args[name] = val
			}
		})
		if typ != pfTypeInstant {
			return
		}
		name, ok := tracks[track]
		require.True(t, ok, "instant on track %d before its descriptor", track)
		in.Track = name
		out = append(out, in)
	})
	return out
}

// PCSampleSpoolN is PCSampleSpool's process with n host-trap samples
// (batches of 1,000 as the shim writes them) alternating between
// dispatches 1 and 2, over 256 offsets of code object 1: for measuring
// the writers.
func PCSampleSpoolN(t testing.TB, dir string, n int) string {
	b := spooltest.New(Info(100))
	Emit(100, 4, b.Add)
	trap := func(slot uint64) uint64 { return tracing.TrapID(0x7f0000000408, slot, 1024) }
	b.Add(tracing.PCSampleDispatch{DispatchID: 1, TrapID: trap(5), AgentNode: 1})
	b.Add(tracing.PCSampleDispatch{DispatchID: 2, TrapID: trap(9), AgentNode: 2})
	raw := make([]byte, 0, 1000*tracing.PCSampleSize)
	for i := 0; i < n; i += 1000 {
		raw = raw[:0]
		d := i / 1000 % 2
		for j := i; j < min(n, i+1000); j++ {
			s := tracing.PCSample{PC: 0x7f0000000000 + uint64(j%256)*4, ExecMask: ^uint64(0), Workgroup: [3]uint32{uint32(j), 0, 0},
				HWID: PCSampleHWID, Timestamp: 100_002_050, CorrelationID: trap(5)}
			if d == 1 {
				s.Timestamp, s.CorrelationID = 100_012_100, trap(9)
			}
			raw = s.Encode(raw)
		}
		b.Add(tracing.PCSampleBatch{AgentNode: uint32(1 + d), Samples: raw})
	}
	path, err := b.WriteFile(dir)
	require.NoError(t, err)
	return path
}

// PCSampleRankSpool writes process pid as rank of an MPI job (its
// environment holds OMPI_COMM_WORLD_RANK=rank) with Emit's 4 iterations
// and host-trap samples of code object 1 (loaded at 0x7f0000000000):
// samples[d] are the offsets sampled in dispatch d (1 and 4 run
// vectorAdd on agent 1 and 2, 2 runs scan_kernel on agent 2), in order,
// each inside its dispatch (at pid*1,000,000 + 2,050, 12,100, 32,100 ns).
func PCSampleRankSpool(t testing.TB, dir string, pid int32, rank int, samples map[uint64][]uint64) string {
	info := Info(pid)
	info.Environ = append(info.Environ, "OMPI_COMM_WORLD_RANK="+strconv.Itoa(rank))
	b := spooltest.New(info)
	Emit(pid, 4, b.Add)
	trap := func(slot uint64) uint64 { return tracing.TrapID(0x7f0000000408, slot, 1024) }
	base := uint64(pid) * 1_000_000
	for _, d := range []struct {
		id, slot uint64
		agent    uint32
		at       uint64
	}{{1, 5, 1, 2_050}, {2, 9, 2, 12_100}, {4, 12, 2, 32_100}} {
		if len(samples[d.id]) == 0 {
			continue
		}
		b.Add(tracing.PCSampleDispatch{DispatchID: d.id, TrapID: trap(d.slot), AgentNode: d.agent})
		var raw []byte
		for _, off := range samples[d.id] {
			raw = tracing.PCSample{PC: 0x7f0000000000 + off, ExecMask: ^uint64(0), Timestamp: base + d.at,
				CorrelationID: trap(d.slot)}.Encode(raw)
		}
		b.Add(tracing.PCSampleBatch{AgentNode: d.agent, Samples: raw})
	}
	path, err := b.WriteFile(dir)
	require.NoError(t, err)
	return path
}
