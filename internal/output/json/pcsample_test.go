package json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// fakeInstructions names an instruction by its offset.
type fakeInstructions struct{}

func (fakeInstructions) Text(s *model.PCSample) (string, bool) {
	if s.CodeObjectID == 0 {
		return "", false
	}
	return fmt.Sprintf("s_nop %#x", s.Offset), true
}
func (fakeInstructions) Comment(s *model.PCSample) string {
	return fmt.Sprintf("k.cpp:%d", s.Offset) // the instruction's source line
}
func (fakeInstructions) NoObjdump() bool { return false }
func (fakeInstructions) Close()          {}

// Host-trap samples are buffer_records.pc_sample_host_trap as rocprofv3
// writes them: {"record": the SDK's host-trap record, "inst_index"}, the
// index into strings.pc_sample_instructions / pc_sample_comments (one entry
// per distinct instruction, -1 for a PC in no code object).
func TestJSONPCSampleHostTrap(t *testing.T) {
	b := spooltest.New(outputtest.Info(100))
	outputtest.Emit(100, 4, b.Add)
	// Dispatch 1 (agent 1, 100,002,000-100,002,100 ns, correlation 1) and
	// dispatch 2 (agent 2, 100,012,000-100,012,150 ns, correlation 3).
	trap1, trap2 := tracing.TrapID(0x7f0000000408, 5, 1024), tracing.TrapID(0x7f0000000410, 9, 1024)
	b.Add(tracing.PCSampleDispatch{DispatchID: 1, TrapID: trap1, AgentNode: 1})
	b.Add(tracing.PCSampleDispatch{DispatchID: 2, TrapID: trap2, AgentNode: 2})
	// HW_ID: wave 3, SIMD 2, pipe 1, CU 5, SA 1, SE 3, TG 4, VM 6, queue 2, ME 1.
	hwid := uint32(3 | 2<<4 | 1<<6 | 5<<8 | 1<<12 | 3<<13 | 4<<16 | 6<<20 | 2<<24 | 1<<30)
	var raw []byte
	for _, pc := range []uint64{0x7f0000000010, 0x7f0000000020, 0x7f0000000010, 0x1234} {
		raw = tracing.PCSample{PC: pc, ExecMask: ^uint64(0), Workgroup: [3]uint32{7, 1, 2}, ChipletWave: 2<<8 | 5,
			HWID: hwid, Timestamp: 100_002_050, CorrelationID: trap1}.Encode(raw)
	}
	b.Add(tracing.PCSampleBatch{AgentNode: 1, Samples: raw})
	b.Add(tracing.PCSampleBatch{AgentNode: 2, Samples: tracing.PCSample{PC: 0x7f0000000030, ExecMask: 0xf,
		Timestamp: 100_012_100, CorrelationID: trap2}.Encode(nil)})
	path, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	in := &model.Input{Spools: []string{path}}
	in.Config.PCInstructions = func(*model.PCSamples) model.PCInstructions { return fakeInstructions{} }

	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in))
	var doc struct {
		Tool []struct {
			Strings struct {
				Instructions []string `json:"pc_sample_instructions"`
				Comments     []string `json:"pc_sample_comments"`
			} `json:"strings"`
			BufferRecords map[string][]map[string]any `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	out := buf.String()
	d := json.NewDecoder(&buf)
	d.UseNumber()
	require.NoError(t, d.Decode(&doc))
	p := doc.Tool[0]
	require.Equal(t, []string{"s_nop 0x10", "s_nop 0x20", "s_nop 0x30"}, p.Strings.Instructions)
	require.Equal(t, []string{"k.cpp:16", "k.cpp:32", "k.cpp:48"}, p.Strings.Comments)
	require.Empty(t, p.BufferRecords["pc_sample_stochastic"])
	recs := p.BufferRecords["pc_sample_host_trap"]
	require.Len(t, recs, 5)

	want0 := `{"inst_index":0,"record":{"corr_id":{"external":0,"internal":1},"dispatch_id":1,` +
		`"exec_mask":18446744073709551615,"hw_id":{"chiplet":2,"cu_or_wgp_id":5,"microengine_id":1,"pipe_id":1,` +
		`"queue_id":2,"shader_array_id":1,"shader_engine_id":3,"simd_id":2,"vm_id":6,"wave_id":3,"workgroup_id ":4},` +
		`"pc":{"code_object_id":1,"code_object_offset":16},"timestamp":100002050,"wave_in_grp":5,` +
		`"wrkgrp_id":{"x":7,"y":1,"z":2}}}`
	got0, err := json.Marshal(recs[0])
	require.NoError(t, err)
	require.JSONEq(t, want0, string(got0))
	idx := func(i int) string { return recs[i]["inst_index"].(json.Number).String() }
	rec := func(i int) map[string]any { return recs[i]["record"].(map[string]any) }
	require.Equal(t, []string{"0", "1", "0", "-1", "2"}, []string{idx(0), idx(1), idx(2), idx(3), idx(4)})
	// A PC in no code object: id 0, the PC as the offset (rocprofv3's
	// ROCPROFILER_CODE_OBJECT_ID_NONE).
	require.Equal(t, map[string]any{"code_object_id": json.Number("0"), "code_object_offset": json.Number("4660")}, rec(3)["pc"])
	r4 := rec(4)
	require.Equal(t, json.Number("2"), r4["dispatch_id"])
	require.Equal(t, json.Number("3"), r4["corr_id"].(map[string]any)["internal"])
	require.Equal(t, json.Number("15"), r4["exec_mask"])
	require.Equal(t, json.Number("100012100"), r4["timestamp"])

	// The keys in rocprofv3's order (its serializer's).
	require.Contains(t, out, `{"record":{"hw_id":{"chiplet":2,"wave_id":3,"simd_id":2,"pipe_id":1,"cu_or_wgp_id":5,`+
		`"shader_array_id":1,"shader_engine_id":3,"workgroup_id ":4,"vm_id":6,"queue_id":2,"microengine_id":1},`+
		`"pc":{"code_object_id":1,"code_object_offset":16},"exec_mask":18446744073709551615,"timestamp":100002050,`+
		`"dispatch_id":1,"corr_id":{"internal":1,"external":0},"wrkgrp_id":{"x":7,"y":1,"z":2},"wave_in_grp":5},"inst_index":0}`)
}
