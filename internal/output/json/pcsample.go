package json

import (
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// jsonPCSamples are a process's PC samples (of either method) with rocprofv3's
// instruction table: strings.pc_sample_instructions and
// strings.pc_sample_comments hold one entry per distinct sampled
// instruction (code object id, offset), in the order of first sample, and
// each sample's inst_index is its instruction's entry (-1 for a PC in no
// known code object), as rocprofv3's tool numbers them.
type jsonPCSamples struct {
	samples      []model.PCSample
	index        []int64
	instructions []string
	comments     []string
}

// readJSONPCSamples reads a process's PC samples and numbers their
// instructions; an empty set when the spool has none (or cannot be read:
// the CSV writer reads the same samples and reports).
func readJSONPCSamples(p *model.Catalogue) *jsonPCSamples {
	out := &jsonPCSamples{}
	s, err := model.ReadPCSamples(p, p.Config.PCSampleKernel)
	if err != nil || s == nil || len(s.Samples) == 0 {
		return out
	}
	ins := p.Config.NewPCInstructions(s)
	defer ins.Close()
	out.samples = s.Samples
	out.index = make([]int64, len(s.Samples))
	type inst struct{ co, off uint64 }
	seen := map[inst]int64{}
	for i := range s.Samples {
		x := &s.Samples[i]
		if x.CodeObjectID == 0 {
			out.index[i] = -1
			continue
		}
		k := inst{x.CodeObjectID, x.Offset}
		idx, ok := seen[k]
		if !ok {
			idx = int64(len(out.instructions))
			seen[k] = idx
			text, _ := ins.Text(x)
			out.instructions = append(out.instructions, text)
			out.comments = append(out.comments, ins.Comment(x)) // the DWARF source line
		}
		out.index[i] = idx
	}
	return out
}

// writeJSONPCSamples writes buffer_records.pc_sample_host_trap (stochastic
// false) or pc_sample_stochastic: per sample of that method rocprofv3's
// {"record": rocprofiler_pc_sampling_record_host_trap_v0_t or
// _stochastic_v0_t, "inst_index"}, the record as rocprofiler-sdk's
// serializer writes it (hw_id decoded from the HW_ID register as its GFX9
// parser does; its "workgroup_id " key keeps the serializer's trailing
// space; no "size"; the stochastic record's flags first and its snapshot
// fields after the common ones, memory counters not written, as there).
func writeJSONPCSamples(j *jsonWriter, p *model.Catalogue, pcs *jsonPCSamples, stochastic bool) {
	want := tracing.PCSamplingHostTrap
	if stochastic {
		want = tracing.PCSamplingStochastic
	}
	for i := range pcs.samples {
		x := &pcs.samples[i]
		if x.Method != want {
			continue
		}
		hw := uint64(x.HWID)
		bits := func(hi, lo uint) uint64 { return hw >> lo & (1<<(hi-lo+1) - 1) }
		j.obj().key("record").obj()
		if stochastic {
			// GFX9 has no memory counters.
			j.key("flags").obj().key("has_mem_cnt").u(0).end()
		}
		j.key("hw_id").obj()
		j.key("chiplet").u(uint64(x.ChipletWave>>8) & 0x3f)
		j.key("wave_id").u(bits(3, 0)).key("simd_id").u(bits(5, 4)).key("pipe_id").u(bits(7, 6))
		j.key("cu_or_wgp_id").u(bits(11, 8)).key("shader_array_id").u(bits(12, 12))
		j.key("shader_engine_id").u(bits(15, 13)).key("workgroup_id ").u(bits(19, 16))
		j.key("vm_id").u(bits(23, 20)).key("queue_id").u(bits(26, 24)).key("microengine_id").u(bits(31, 30))
		j.end()
		j.key("pc").obj().key("code_object_id").u(x.CodeObjectID).key("code_object_offset").u(x.Offset).end()
		j.key("exec_mask").u(x.ExecMask).key("timestamp").u(x.Timestamp).key("dispatch_id").u(x.DispatchID)
		j.key("corr_id").obj().key("internal").u(p.CID(x.CorrelationID))
		j.key("external").u(p.CID(p.Renamer.External(x.TID, x.CorrelationID))).end()
		j.key("wrkgrp_id").obj().key("x").u(uint64(x.Workgroup[0])).key("y").u(uint64(x.Workgroup[1]))
		j.key("z").u(uint64(x.Workgroup[2])).end()
		j.key("wave_in_grp").u(uint64(x.WaveInGroup()))
		if stochastic {
			j.key("wave_issued").u(b2u(x.WaveIssued))
			j.key("inst_type").s(x.InstType.Name())
			j.key("wave_cnt").u(uint64(x.WaveCount))
			j.key("snapshot").obj()
			j.key("stall_reason").s(x.StallReason.Name())
			j.key("dual_issue_valu").u(b2u(x.DualIssueVALU))
			for k, name := range model.PCArbPipeNames {
				j.key("arb_state_issue_" + name).u(b2u(x.ArbIssue.Has(model.PCArbPipes(1) << k)))
			}
			for k, name := range model.PCArbPipeNames {
				j.key("arb_state_stall_" + name).u(b2u(x.ArbStall.Has(model.PCArbPipes(1) << k)))
			}
			j.end()
		}
		j.end()
		j.key("inst_index").i(pcs.index[i]).end()
	}
}
