package json

import (
	"bytes"
	"encoding"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
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

// A dispatch whose samples come apart in the spool (its thread's chunk
// filled in the middle, another completion thread's chunk read in between)
// is still one element with all its values, at its place, and no dispatch
// is listed twice.
func TestJSONCounterRecordsOfASplitDispatch(t *testing.T) {
	b := spooltest.New(outputtest.Info(100))
	var heldBack []encoding.BinaryAppender
	outputtest.Emit(100, 16, func(r encoding.BinaryAppender) {
		if c, ok := r.(tracing.CounterSample); ok {
			switch {
			case c.DispatchID == 1 && c.CounterID == 2: // the second half of dispatch 1
				heldBack = append(heldBack, r)
				return
			case c.DispatchID == 5 && c.CounterID == 2: // after dispatch 5's samples
				b.Add(r)
				if c.Dims[0].Index == 1 {
					for _, h := range heldBack {
						b.Add(h)
					}
				}
				return
			}
		}
		b.Add(r)
	})
	path, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	doc := decodeJSON(t, &model.Input{Spools: []string{path}})
	seen := map[uint64][]float64{}
	var order []uint64
	for _, d := range doc.Tool[0].CallbackRecords.CounterCollection {
		id := d.DispatchData.DispatchInfo.DispatchID
		require.NotContains(t, seen, id, "dispatch %d listed twice", id)
		order = append(order, id)
		for _, r := range d.Records {
			seen[id] = append(seen[id], r.Value)
		}
	}
	require.Equal(t, []float64{10, 11, 20, 21}, seen[1], "dispatch 1: its own samples in spool order")
	require.Equal(t, []float64{10, 11, 20, 21}, seen[5])
	require.Len(t, seen, 4, "dispatches 1, 5, 9 and 13 are counted")
	// In the order their samples first appear, as rocprofv3 lists them
	// (rocprofiler-compute numbers dispatches by position): dispatch 1
	// first, though its last samples come after dispatch 5's.
	require.Equal(t, []uint64{1, 5, 9, 13}, order)
}
