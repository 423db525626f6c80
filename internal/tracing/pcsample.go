package tracing

// PCSampleSize is the size of one sample as ROCR delivers it
// (perf_sample_hosttrap_v1_t or perf_sample_snapshot_v1_t,
// rpg_pc_sample_hosttrap).
const PCSampleSize = 64

// PCSamplingMethod is a session's method, rocprofiler-sdk's
// rocprofiler_pc_sampling_method_t values (RPG_PC_SAMPLING_METHOD_*).
type PCSamplingMethod uint32

// PC-sampling methods.
const (
	PCSamplingStochastic PCSamplingMethod = 1
	PCSamplingHostTrap   PCSamplingMethod = 2
)

// String is rocprofv3's name of the method (its --pc-sampling-method).
func (m PCSamplingMethod) String() string {
	switch m {
	case PCSamplingStochastic:
		return "stochastic"
	case PCSamplingHostTrap:
		return "host_trap"
	}
	return "none"
}

// PCSample is one PC sample (perf_sample_hosttrap_v1_t, or
// perf_sample_snapshot_v1_t for stochastic): the wave's program counter
// and exec mask, its workgroup, wave and chiplet, HW_ID, the snapshot
// registers (stochastic only), the time (system ns: ROCR converts the GPU
// ticks) and the trap handler's correlation id, (doorbell id << 32) |
// packet slot.
type PCSample struct {
	PC          uint64
	ExecMask    uint64
	Workgroup   [3]uint32
	ChipletWave uint32 // wave in group: bits 0-5; chiplet: bits 8-10
	HWID        uint32
	// Snapshot is perf_snapshot_data, _data1 and _data2 (zero for host
	// trap, whose words there are reserved).
	Snapshot      [3]uint32
	Timestamp     uint64
	CorrelationID uint64 // the trap handler's: TrapID of the dispatch
}

// WaveInGroup is the wave's index in its workgroup.
func (s *PCSample) WaveInGroup() uint32 { return s.ChipletWave & 0x3f }

// Chiplet is the XCC that ran the wave.
func (s *PCSample) Chiplet() uint32 { return (s.ChipletWave >> 8) & 0x7 }

// PCSampleBatch is what one record holds of a data_ready callback's
// samples for one agent; Lost is ROCR's lost count reported with the
// callback (on its first record); Method the session's.
type PCSampleBatch struct {
	AgentNode uint32
	Method    PCSamplingMethod
	Lost      uint64
	Samples   []byte // Count() samples of PCSampleSize bytes (aliases the spool)
}

// Count is the number of samples in the batch.
func (b *PCSampleBatch) Count() int { return len(b.Samples) / PCSampleSize }

// Sample decodes the batch's i-th sample.
func (b *PCSampleBatch) Sample(i int) PCSample {
	r := b.Samples[i*PCSampleSize:]
	return PCSample{PC: le.Uint64(r), ExecMask: le.Uint64(r[8:]),
		Workgroup:   [3]uint32{le.Uint32(r[16:]), le.Uint32(r[20:]), le.Uint32(r[24:])},
		ChipletWave: le.Uint32(r[28:]), HWID: le.Uint32(r[32:]),
		Snapshot:      [3]uint32{le.Uint32(r[36:]), le.Uint32(r[40:]), le.Uint32(r[44:])},
		Timestamp:     le.Uint64(r[48:]),
		CorrelationID: le.Uint64(r[56:])}
}

// PCSampleDispatch is where a dispatch went on its hardware queue while PC
// sampling was on: the correlation id its samples carry.
type PCSampleDispatch struct {
	DispatchID uint64
	TrapID     uint64 // ((doorbell >> 3) & 0x3ff) << 32 | (write index mod queue size)
	AgentNode  uint32
}

// TrapID is the correlation id the trap handler writes for a packet at
// writeIndex of a hardware queue of size packets whose doorbell is at
// doorbell (rocprofiler-sdk's trap_correlation_id).
func TrapID(doorbell, writeIndex, size uint64) uint64 {
	slot := writeIndex
	if size != 0 {
		slot = writeIndex % size
	}
	return ((doorbell>>3)&0x3ff)<<32 | slot&0x1ffffff
}

// TrapIDKey masks a sample's correlation id to the fields TrapID sets.
func TrapIDKey(corr uint64) uint64 { return corr & (0x3ff<<32 | 0x1ffffff) }

// pcSampleRecSize is rpg_pc_sample_rec's size (the samples follow): the
// record's version 2. Version 1 (host trap only, written before stochastic
// sampling was collected) ends before the method word, at
// pcSampleRecSizeV1; spools kept from then still read.
const (
	pcSampleRecSize   = 32
	pcSampleRecSizeV1 = 24
	pcSampleVersion   = 2
)

// decodePCSampleBatch decodes a PC sample record by its format byte form
// as the reader checked it; a sample count that no longer fits the record
// (its bytes rewritten since) gives no samples.
func decodePCSampleBatch(rec []byte, form byte) PCSampleBatch {
	n := uint64(le.Uint32(rec[12:])) * PCSampleSize
	b := PCSampleBatch{AgentNode: le.Uint32(rec[8:]), Lost: le.Uint64(rec[16:]), Method: PCSamplingHostTrap}
	off := uint64(pcSampleRecSize)
	if form == 1 || len(rec) < pcSampleRecSize {
		off = pcSampleRecSizeV1
	} else {
		b.Method = PCSamplingMethod(le.Uint32(rec[24:]))
	}
	if off+n > uint64(len(rec)) {
		n = 0
	}
	b.Samples = rec[off : off+n]
	return b
}

func decodePCSampleDispatch(rec []byte) PCSampleDispatch {
	return PCSampleDispatch{DispatchID: le.Uint64(rec[8:]), TrapID: le.Uint64(rec[16:]), AgentNode: le.Uint32(rec[24:])}
}

// PCSampleBatch decodes a KindPCSample record.
func (r *Reader) PCSampleBatch() PCSampleBatch { return decodePCSampleBatch(r.rec, r.form) }

// PCSampleDispatch decodes a KindPCSampleDispatch record.
func (r *Reader) PCSampleDispatch() PCSampleDispatch { return decodePCSampleDispatch(r.rec) }

// AppendBinary appends the published record (samples as Encode gives them).
func (b PCSampleBatch) AppendBinary(out []byte) ([]byte, error) {
	out, o := begin(out, KindPCSample, pcSampleRecSize-pcSampleRecSizeV1+len(b.Samples))
	r := out[o:]
	r[6] = pcSampleVersion
	le.PutUint32(r[8:], b.AgentNode)
	le.PutUint32(r[12:], uint32(len(b.Samples)/PCSampleSize))
	le.PutUint64(r[16:], b.Lost)
	le.PutUint32(r[24:], uint32(b.Method))
	copy(r[pcSampleRecSize:], b.Samples)
	return out, nil
}

// Encode appends the sample's 64 bytes as ROCR delivers them.
func (s PCSample) Encode(b []byte) []byte {
	var r [PCSampleSize]byte
	le.PutUint64(r[0:], s.PC)
	le.PutUint64(r[8:], s.ExecMask)
	le.PutUint32(r[16:], s.Workgroup[0])
	le.PutUint32(r[20:], s.Workgroup[1])
	le.PutUint32(r[24:], s.Workgroup[2])
	le.PutUint32(r[28:], s.ChipletWave)
	le.PutUint32(r[32:], s.HWID)
	le.PutUint32(r[36:], s.Snapshot[0])
	le.PutUint32(r[40:], s.Snapshot[1])
	le.PutUint32(r[44:], s.Snapshot[2])
	le.PutUint64(r[48:], s.Timestamp)
	le.PutUint64(r[56:], s.CorrelationID)
	return append(b, r[:]...)
}

// AppendBinary appends the published record.
func (d PCSampleDispatch) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindPCSampleDispatch, 0)
	r := b[o:]
	le.PutUint64(r[8:], d.DispatchID)
	le.PutUint64(r[16:], d.TrapID)
	le.PutUint32(r[24:], d.AgentNode)
	return b, nil
}
