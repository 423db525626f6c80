package rocpd

import (
	"fmt"
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// PC samples in ROCpd (issue 34). rocprofv3's ROCpd output has no
// PC-sample table; rocprofiler-systems stores its samples as rocpd_sample
// rows on a rocpd_track, each with a rocpd_event, which the schema's
// samples and sample_regions views read. rocprof-go does the same:
//
//   - one track per process and agent, name "PC samples", extdata
//     {"agent_id": <rocpd_info_agent id>}; its tid is the thread of the
//     first sampled dispatch on that agent (the samples view joins the
//     track's thread);
//   - per sample a rocpd_sample row (timestamp = the sample's) and an
//     event whose category is rocprofv3's buffer name
//     (PC_SAMPLING_HOST_TRAP), whose stack_id and parent_stack_id are the
//     dispatch's internal correlation id and correlation_id its external
//     one, as the dispatch's own event; the event's extdata carries the
//     sample (below).

// PCTrackName is the name of a PC-sample track.
const PCTrackName = "PC samples"

// Categories of PC-sample events: rocprofv3's buffer names.
const (
	PCCategoryHostTrap   = "PC_SAMPLING_HOST_TRAP"
	PCCategoryStochastic = "PC_SAMPLING_STOCHASTIC"
)

// A PC sample's event carries in extdata, in this key order (the type that
// reads it back is internal/analysis/rocpdread's PCSampleExt): dispatch_id,
// code_object_id (the rocpd_info_code_object id, 0 for a PC in no known code
// object), code_object_offset (the PC's offset from that code object's load
// base; the PC itself for id 0), pc, exec_mask (unsigned 64 bits: read it as
// text, SQLite's json_extract turns values past 2^63 into reals), wrkgrp_id
// {x, y, z}, wave_in_grp, chiplet, hw_id (the raw HW_ID register, decoded as
// JSON's hw_id), instruction (the disassembled text, "" when unknown) and
// instruction_comment (the CSV's Instruction_Comment); for stochastic
// samples then wave_issued, inst_type and stall_reason (short names: VALU,
// WAITCNT, as rocprofiler-sdk's enums without their prefix), wave_count,
// dual_issue_valu and snapshot (the three raw snapshot registers, from which
// convert rebuilds the sample).

// UnrecognizedComment is rocprofv3's Instruction_Comment of a PC in no
// code object the profiler could read.
const UnrecognizedComment = "Unrecognized code object id, physical virtual address of PC:"

// writePCSamples adds a process's PC samples (after its other records,
// the encoder still running).
func (w *rocpdWriter) writePCSamples(p *model.Catalogue, ids *rocpdIDs) error {
	if p.PCSampleCount == 0 {
		return nil
	}
	s, err := model.ReadPCSamples(p, p.Config.PCSampleKernel)
	if err != nil || s == nil || len(s.Samples) == 0 {
		return err
	}
	ins := p.Config.NewPCInstructions(s)
	defer ins.Close()
	e := &w.enc
	cats := [...]int64{w.str(PCCategoryHostTrap), w.str(PCCategoryStochastic)}
	name := w.str(PCTrackName)
	tracks := map[uint32]int64{}
	// Instruction texts and comments by (code object, offset): one
	// disassembly each.
	type inst struct{ co, off uint64 }
	type text struct{ text, comment string }
	texts := map[inst]text{}
	var b []byte
	for i := range s.Samples {
		x := &s.Samples[i]
		tr, ok := tracks[x.AgentNode]
		if !ok {
			tr = w.pcTrack(ids, x.AgentNode, x.TID, name)
			tracks[x.AgentNode] = tr
		}
		k := inst{x.CodeObjectID, x.Offset}
		t, ok := texts[k]
		if !ok {
			var known bool
			t.text, known = ins.Text(x)
			if known {
				t.comment = commentOf(ins, x)
			} else {
				t.comment = UnrecognizedComment + strconv.FormatUint(x.Offset, 10)
			}
			texts[k] = t
		}
		co := int64(0)
		if x.CodeObjectID != 0 {
			co = ids.codeObjects[x.CodeObjectID]
		}
		b = appendPCSampleExt(b[:0], x, co, t.text, t.comment)
		cat := cats[0]
		if x.Method == tracing.PCSamplingStochastic {
			cat = cats[1]
		}
		corr := int64(p.CID(x.CorrelationID))
		ext := int64(p.CID(p.Renamer.External(x.TID, x.CorrelationID)))
		ev, err := e.add(tabEvent, string(b), cat, corr, corr, ext)
		if err != nil {
			return err
		}
		if _, err := e.add(tabSample, "", tr, int64(x.Timestamp), ev); err != nil {
			return err
		}
	}
	return nil
}

// pcTrack writes (in the last turn) the PC-sample track of an agent.
func (w *rocpdWriter) pcTrack(ids *rocpdIDs, node, tid uint32, name int64) int64 {
	agent := ids.agentID(node)
	id := int64(len(w.tracks) + 1)
	// Keyed apart from the API tracks (whose tid is >= 0).
	w.tracks[[3]int64{ids.pid, -1 - agent, name}] = id
	fmt.Fprintf(&w.late, "INSERT INTO `rocpd_track%s` (id, nid, pid, tid, name_id, extdata) VALUES (%d, %d, %d, %d, %d, '{\"agent_id\":%d}');\n",
		w.suffix, id, ids.nid, ids.pid, ids.threads[tid], name, agent)
	return id
}

// appendPCSampleExt appends a sample's extdata (the layout above).
func appendPCSampleExt(b []byte, x *model.PCSample, co int64, text, comment string) []byte {
	u := func(key string, v uint64) {
		b = append(b, key...)
		b = strconv.AppendUint(b, v, 10)
	}
	u(`{"dispatch_id":`, x.DispatchID)
	u(`,"code_object_id":`, uint64(co))
	u(`,"code_object_offset":`, x.Offset)
	u(`,"pc":`, x.PC)
	u(`,"exec_mask":`, x.ExecMask)
	u(`,"wrkgrp_id":{"x":`, uint64(x.Workgroup[0]))
	u(`,"y":`, uint64(x.Workgroup[1]))
	u(`,"z":`, uint64(x.Workgroup[2]))
	u(`},"wave_in_grp":`, uint64(x.WaveInGroup()))
	u(`,"chiplet":`, uint64(x.ChipletWave>>8)&0x3f)
	u(`,"hw_id":`, uint64(x.HWID))
	b = append(b, `,"instruction":`...)
	b = appendSQLiteJSON(b, text)
	b = append(b, `,"instruction_comment":`...)
	b = appendSQLiteJSON(b, comment)
	if x.Method == tracing.PCSamplingStochastic {
		b = append(b, `,"wave_issued":`...)
		b = strconv.AppendBool(b, x.WaveIssued)
		b = append(b, `,"inst_type":"`...)
		b = append(b, x.InstType.String()...)
		b = append(b, `","stall_reason":"`...)
		b = append(b, x.StallReason.String()...)
		b = append(b, '"')
		u(`,"wave_count":`, uint64(x.WaveCount))
		b = append(b, `,"dual_issue_valu":`...)
		b = strconv.AppendBool(b, x.DualIssueVALU)
		u(`,"snapshot":[`, uint64(x.Snapshot[0]))
		u(`,`, uint64(x.Snapshot[1]))
		u(`,`, uint64(x.Snapshot[2]))
		b = append(b, ']')
	}
	return append(b, '}')
}

// commentOf is the disassembler's source line of a sample's PC, when it
// gives them.
func commentOf(ins model.PCInstructions, s *model.PCSample) string {
	if c, ok := ins.(interface{ Comment(*model.PCSample) string }); ok {
		return c.Comment(s)
	}
	return ""
}
