package json

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

func decodeJSON(t *testing.T, in *model.Input) *outputtest.JSONDoc {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in))
	var doc outputtest.JSONDoc
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc), "results.json must be valid JSON")
	return &doc
}

func TestJSONLayoutAndCounts(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	in.Config.Stats = true
	doc := decodeJSON(t, in)
	require.Len(t, doc.Tool, 2)
	for i, pid := range []int{100, 200} {
		p := doc.Tool[i]
		require.Equal(t, pid, p.Metadata.PID)
		require.Equal(t, []string{"./app", "--size", "4"}, p.Metadata.Command)
		require.Equal(t, outputtest.Counts(16), outputtest.JSONCounts(doc, i))
		require.Len(t, p.Agents, 3)
		require.Equal(t, 2, p.Agents[1].Type)
		// SDK enum numbering: kinds by number, operations by id.
		require.Len(t, p.Strings.BufferRecords, 33)
		require.Equal(t, "HIP_RUNTIME_API_EXT", p.Strings.BufferRecords[21].Kind)
		require.Equal(t, "hipLaunchKernel", p.Strings.BufferRecords[21].Operations[1])
		require.Equal(t, "MARKER_CORE_RANGE_API", p.Strings.BufferRecords[32].Kind)
		require.Equal(t, 21, p.BufferRecords["hip_api"][0].Kind)
		require.Equal(t, 11, p.BufferRecords["kernel_dispatch"][0].Kind)
		require.Equal(t, 2, p.BufferRecords["kernel_dispatch"][0].Operation)
		require.Equal(t, 10, p.BufferRecords["memory_copy"][0].Kind)
		require.Equal(t, 1, p.BufferRecords["memory_copy"][0].Operation)
		// Records come in completion order (rocprofv3's buffers), whatever
		// kind of marker: the fixture's control calls end first.
		var threadRanges int
		for k, m := range p.BufferRecords["marker_api"] {
			if k > 0 {
				require.GreaterOrEqual(t, m.End, p.BufferRecords["marker_api"][k-1].End)
			}
			if m.Kind == 32 && m.Operation == 1 { // roctxThreadRangeA
				threadRanges++
			}
		}
		require.NotZero(t, threadRanges)
		require.Len(t, p.Strings.MarkerAPI, 16)
		require.Equal(t, "iteration 0", p.Strings.MarkerAPI[0].Value)
		// Indexed by kernel id, as rocprofv3 writes it: entry 0 is empty.
		require.Equal(t, "", p.KernelSymbols[0].FormattedKernelName)
		require.Equal(t, "vectorAdd_float(float*, float const*, float const*, int)", p.KernelSymbols[1].FormattedKernelName)
		require.Len(t, p.Summary, 7)
		require.Equal(t, []float64{10, 11}, []float64{p.CallbackRecords.CounterCollection[0].Records[0].Value, p.CallbackRecords.CounterCollection[0].Records[1].Value})
	}
}

func TestJSONStringEscaping(t *testing.T) {
	got := string(appendJSONString(nil, "a\"b\\c\n\x01\xffé"))
	require.Equal(t, `"a\"b\\c\n\u0001`+"\ufffdé\"", got)
	var s string
	require.NoError(t, json.Unmarshal([]byte(got), &s))
}
