package perfetto

import (
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// pcSamples writes a process's PC samples (issue 34) as instant events on
// one track per agent, "PC samples (Agent N)", a child of the process's
// track: each named by its instruction (the disassembled text, else the
// kernel and the PC's offset, "kernel+0x10"), category the rocprofv3
// buffer name (PC_SAMPLING_HOST_TRAP, PC_SAMPLING_STOCHASTIC), at the
// sample's time, which lies within its dispatch. Annotations: dispatch_id,
// corr_id, kernel, code_object_id, offset, exec_mask, and for stochastic
// samples wave_issued, inst_type, stall_reason and wave_count.
// rocprofv3's Perfetto output has no PC samples. child sends a track
// under the process's (procTrack). The kernel is named as the trace names
// the sample's dispatch slice, by its demangled symbol, also with
// --kernel-rename (rocprofv3's Perfetto slices keep the kernel's name;
// CSV, ROCpd and Parquet take the range's).
func (pw *perfettoWriter) pcSamples(p *model.Catalogue, pid int32, procTrack uint64, child func(uint64, func(pbMsg) pbMsg)) {
	if p.PCSampleCount == 0 {
		return
	}
	s, err := model.ReadPCSamples(p, p.Config.PCSampleKernel)
	if err != nil || s == nil || len(s.Samples) == 0 {
		return
	}
	ins := p.Config.NewPCInstructions(s)
	defer ins.Close()
	type inst struct{ co, off uint64 }
	names := map[inst]string{}
	tracks := map[uint32]uint64{}
	part := pw.part
	for i := range s.Samples {
		x := &s.Samples[i]
		if pw.part != part {
			part = pw.part
			clear(tracks)
		}
		if pw.cap != nil {
			if pw.cap.rolledBack {
				pw.cap.rolledBack = false
				clear(tracks)
			}
			pw.cap.records++
		}
		t, ok := tracks[x.AgentNode]
		if !ok {
			label := "PC samples (" + p.AgentLabel(x.AgentNode, " ") + ")"
			t = uuidOf("pcsamples", int64(pid), p.Info.StartBoottimeNs, x.AgentNode)
			child(t, func(d pbMsg) pbMsg { return d.u(pfTrackParent, procTrack).s(pfTrackName, label) })
			tracks[x.AgentNode] = t
		}
		k := inst{x.CodeObjectID, x.Offset}
		name, ok := names[k]
		if !ok {
			name, _ = ins.Text(x)
			if name == "" {
				name = p.KernelDemangled(x.KernelID) + "+0x" + strconv.FormatUint(x.Offset, 16)
			}
			names[k] = name
		}
		cat := "PC_SAMPLING_HOST_TRAP"
		if x.Method == tracing.PCSamplingStochastic {
			cat = "PC_SAMPLING_STOCHASTIC"
		}
		pw.ev = pbMsg(pw.ev[:0]).u(pfEventType, pfTypeInstant).u(pfEventTrackUUID, t).
			u(pfEventCategoryIIDs, pw.iid(pw.cats, pfInternedCategories, cat)).
			u(pfEventNameIID, pw.iid(pw.names, pfInternedNames, name))
		pw.annU("dispatch_id", x.DispatchID)
		pw.annU("corr_id", p.CID(x.CorrelationID))
		pw.annS("kernel", p.KernelDemangled(x.KernelID))
		pw.annU("code_object_id", x.CodeObjectID)
		pw.annU("offset", x.Offset)
		pw.annU("exec_mask", x.ExecMask)
		if x.Method == tracing.PCSamplingStochastic {
			pw.annU("wave_issued", uint64(b2u(x.WaveIssued)))
			pw.annS("inst_type", x.InstType.String())
			pw.annS("stall_reason", x.StallReason.String())
			pw.annU("wave_count", uint64(x.WaveCount))
		}
		pkt := pbMsg(pw.pkt[:0]).u(pfPacketTimestamp, pw.at(x.Timestamp)).msg(pfPacketTrackEvent, pw.ev)
		if len(pw.interned) > 0 {
			pkt = pkt.msg(pfPacketInternedData, pw.interned)
			pw.interned = pw.interned[:0]
		}
		pw.emit(pkt)
		pw.pkt = pkt
		pw.commit(pid)
		if pw.err != nil {
			return
		}
		pw.partBoundary()
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
