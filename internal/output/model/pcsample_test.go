package model_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The gfx9 snapshot decodes as rocprofiler-sdk's GFX9 parser decodes it
// (bit fields and translation tables), with its names for the enums.
func TestDecodeGFX9Snapshot(t *testing.T) {
	// valid, issued, dual issue, type 1 (matrix), reason 7 (other wait),
	// arbiter: issue bit 7 (valu) and 0 (misc), stall bit 12 (vmem_tex);
	// 9 waves on the CU.
	d := uint32(1 | 1<<1 | 1<<2 | 1<<3 | 7<<7 | (1<<7|1|1<<12)<<10)
	s := model.PCSample{PCSample: tracing.PCSample{Snapshot: [3]uint32{d, 0xc9, 0}}}
	require.True(t, model.DecodeGFX9Snapshot(&s))
	require.True(t, s.WaveIssued)
	require.True(t, s.DualIssueVALU)
	require.Equal(t, model.PCInstMatrix, s.InstType)
	require.Equal(t, model.PCStallOtherWait, s.StallReason)
	require.Equal(t, model.PCArbVALU|model.PCArbMisc, s.ArbIssue)
	require.Equal(t, model.PCArbVMEMTex, s.ArbStall)
	require.Equal(t, uint32(9), s.WaveCount)

	// Not issued: type 13 is NO_INST, reason 2 WAITCNT; codes the table
	// lacks are NONE.
	s = model.PCSample{PCSample: tracing.PCSample{Snapshot: [3]uint32{1 | 13<<3 | 2<<7, 4, 0}}}
	require.True(t, model.DecodeGFX9Snapshot(&s))
	require.False(t, s.WaveIssued)
	require.Equal(t, "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_NO_INST", s.InstType.Name())
	require.Equal(t, "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_WAITCNT", s.StallReason.Name())
	s.Snapshot[0] = 1 | 15<<3
	require.True(t, model.DecodeGFX9Snapshot(&s))
	require.Equal(t, model.PCInstNone, s.InstType)
	require.Equal(t, model.PCStallNoInstructionAvailable, s.StallReason)

	// Invalid: valid clear, or error (bit 26) set.
	require.False(t, model.DecodeGFX9Snapshot(&model.PCSample{PCSample: tracing.PCSample{Snapshot: [3]uint32{2, 0, 0}}}))
	require.False(t, model.DecodeGFX9Snapshot(&model.PCSample{PCSample: tracing.PCSample{Snapshot: [3]uint32{1 | 1<<26, 0, 0}}}))

	require.Equal(t, "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_DUAL_VALU", model.PCInstDualVALU.Name())
	require.Equal(t, "ROCPROFILER_PC_SAMPLING_INSTRUCTION_TYPE_NONE", model.PCInstNone.Name())
	require.Equal(t, "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_SLEEP_WAIT", model.PCStallSleepWait.Name())
	require.Equal(t, "", model.PCStallReason(10).Name())
	require.Equal(t, "BARRIER_WAIT", model.PCStallBarrierWait.String())
	require.Equal(t, "lds_direct", model.PCArbPipeNames[3])
	require.True(t, model.PCArbLDSDirect.Has(model.PCArbLDSDirect))
}
