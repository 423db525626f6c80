package json

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// Stochastic samples are buffer_records.pc_sample_stochastic, each record
// in rocprofiler-sdk's serializer's order for the stochastic record: flags,
// host trap's fields, wave_issued, inst_type, wave_cnt, snapshot (stall
// reason, dual issue, the arbiter's issue then stall bits); the names are
// rocprofiler-sdk's. An invalid sample is left out; no host-trap record.
func TestJSONPCSampleStochastic(t *testing.T) {
	b := spooltest.New(outputtest.Info(100))
	outputtest.Emit(100, 4, b.Add)
	trap1 := tracing.TrapID(0x7f0000000408, 5, 1024)
	b.Add(tracing.PCSampleDispatch{DispatchID: 1, TrapID: trap1, AgentNode: 1})
	// issued VALU (type 0) with the VALU pipe's issue bit (arb bit 7);
	// not issued (type 13 NO_INST) waiting on s_waitcnt (reason 2) with
	// the misc pipe's stall bit (arb bit 8); an invalid one.
	issued := uint32(1 | 1<<1 | 0<<3 | 7<<7 | 1<<(10+7))
	waiting := uint32(1 | 13<<3 | 2<<7 | 1<<(10+8))
	var raw []byte
	for _, d := range []uint32{issued, waiting, 0} {
		raw = tracing.PCSample{PC: 0x7f0000000010, ExecMask: ^uint64(0), Workgroup: [3]uint32{7, 0, 0}, ChipletWave: 1,
			HWID: 5 << 8, Snapshot: [3]uint32{d, 4, 0}, Timestamp: 100_002_050, CorrelationID: trap1}.Encode(raw)
	}
	b.Add(tracing.PCSampleBatch{AgentNode: 1, Method: tracing.PCSamplingStochastic, Samples: raw})
	path, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	in := &model.Input{Spools: []string{path}}
	in.Config.PCInstructions = func(*model.PCSamples) model.PCInstructions { return fakeInstructions{} }
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in))
	out := buf.String()
	require.Contains(t, out, `"pc_sample_host_trap":[]`)
	arb := func(issue, stall string) string {
		s := ""
		for _, p := range model.PCArbPipeNames {
			v := "0"
			if p == issue {
				v = "1"
			}
			s += `,"arb_state_issue_` + p + `":` + v
		}
		for _, p := range model.PCArbPipeNames {
			v := "0"
			if p == stall {
				v = "1"
			}
			s += `,"arb_state_stall_` + p + `":` + v
		}
		return s
	}
	common := `"hw_id":{"chiplet":0,"wave_id":0,"simd_id":0,"pipe_id":0,"cu_or_wgp_id":5,"shader_array_id":0,` +
		`"shader_engine_id":0,"workgroup_id ":0,"vm_id":0,"queue_id":0,"microengine_id":0},` +
		`"pc":{"code_object_id":1,"code_object_offset":16},"exec_mask":18446744073709551615,"timestamp":100002050,` +
		`"dispatch_id":1,"corr_id":{"internal":1,"external":0},"wrkgrp_id":{"x":7,"y":0,"z":0},"wave_in_grp":1,`
	want := `"pc_sample_stochastic":[` +
		`{"record":{"flags":{"has_mem_cnt":0},` + common +
		`"wave_issued":1,"inst_type":"ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_VALU","wave_cnt":4,` +
		`"snapshot":{"stall_reason":"ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_OTHER_WAIT","dual_issue_valu":0` +
		arb("valu", "") + `}},"inst_index":0},` +
		`{"record":{"flags":{"has_mem_cnt":0},` + common +
		`"wave_issued":0,"inst_type":"ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_NO_INST","wave_cnt":4,` +
		`"snapshot":{"stall_reason":"ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT","dual_issue_valu":0` +
		arb("", "misc") + `}},"inst_index":0}]`
	require.Contains(t, out, want)
}
