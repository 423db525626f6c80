package tracing_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// An RCCL record goes through the spool and comes back with its function,
// thread, ids, times, tail and every parameter, named by the function table.
func TestRCCLRoundTrip(t *testing.T) {
	allReduce := tracing.RCCLCall{
		APICall: tracing.APICall{Function: 1, TID: 77, CorrelationID: 40, Start: 1000, End: 5000},
		// sendbuff, recvbuff, count, datatype (ncclFloat32 = 7), op (sum), comm, stream
		EndCorrelationID: 52,
		Args: [][]byte{u64(0x7f0000001000), u64(0x7f0000002000), u64(262144), u32(7), u32(0),
			u64(0x5500), u64(0x6600)},
	}
	uniqueID := make([]byte, 128)
	for i := range uniqueID {
		uniqueID[i] = byte(i)
	}
	initRank := tracing.RCCLCall{
		APICall:          tracing.APICall{Function: 17, TID: 78, CorrelationID: 3, Start: 10, End: 20},
		EndCorrelationID: 9,
		Args:             [][]byte{u64(0x1234), u32(4), uniqueID, u32(2)},
	}
	groupStart := tracing.RCCLCall{
		APICall:          tracing.APICall{Function: 13, TID: 77, CorrelationID: 39, Start: 900, End: 950},
		EndCorrelationID: 40,
	}
	b := spooltest.New(testProcess)
	b.Add(tracing.String{Table: uint32(tracing.DomainRCCL), ID: 1, Value: []byte("ncclAllReduce")})
	for _, c := range []tracing.RCCLCall{allReduce, initRank, groupStart} {
		b.Add(c)
	}
	r, err := tracing.NewReader(b.Bytes())
	require.NoError(t, err)
	require.True(t, r.Next())
	require.Equal(t, tracing.KindString, r.Kind())
	require.Equal(t, "ncclAllReduce", string(r.String().Value))
	var got []tracing.RCCLCall
	for r.Next() {
		require.Equal(t, tracing.KindRCCLAPI, r.Kind())
		require.Equal(t, tracing.DomainRCCL, r.APICall().Domain)
		c := r.RCCLCall()
		c.APICall.Args = nil // the raw blob; Args and EndCorrelationID hold it decoded
		got = append(got, c)
	}
	st := r.Stats()
	require.Equal(t, uint64(3), st.Count(tracing.KindRCCLAPI))
	want := []tracing.RCCLCall{allReduce, initRank, groupStart}
	for i := range want {
		want[i].Domain = tracing.DomainRCCL
	}
	require.Equal(t, want, got)

	require.Equal(t, "ncclAllReduce", got[0].Name())
	require.Equal(t, u64(262144), got[0].Arg("count"))
	require.Equal(t, u32(7), got[0].Arg("datatype"))
	require.Nil(t, got[0].Arg("root"), "ncclAllReduce has no root")
	require.Equal(t, uniqueID, got[1].Arg("commId"))
	require.Equal(t, "ncclGroupStart", got[2].Name())
	require.Empty(t, got[2].Args)

	// Encloses: the HIP calls of the same thread with ids strictly inside.
	require.True(t, got[0].Encloses(77, 41))
	require.True(t, got[0].Encloses(77, 51))
	require.False(t, got[0].Encloses(77, 40), "the RCCL call's own id")
	require.False(t, got[0].Encloses(77, 52), "the first id after it")
	require.False(t, got[0].Encloses(78, 45), "another thread")
}

// The preload library writes compact records (versions 2 and 3) whenever a
// call fits them; the reader takes them for RCCL as for HIP and HSA, tail
// and parameters from the blob before the padding.
func TestRCCLCompactRecord(t *testing.T) {
	blob := append(u64(19), append(u32(4), u32(0xabcd)...)...) // tail, then one int parameter
	size := (tracing.APICompactSize + len(blob) + 7) &^ 7
	rec := make([]byte, size)
	binary.LittleEndian.PutUint32(rec[0:], uint32(size))
	binary.LittleEndian.PutUint16(rec[4:], uint16(tracing.KindRCCLAPI))
	rec[6] = 2 // ns stamps
	rec[7] = 0xC5
	binary.LittleEndian.PutUint16(rec[8:], 24) // ncclGetErrorString
	rec[10] = byte(tracing.DomainRCCL)
	rec[11] = byte(size - tracing.APICompactSize - len(blob))
	binary.LittleEndian.PutUint32(rec[12:], 250) // duration
	binary.LittleEndian.PutUint64(rec[16:], 18)  // correlation id
	binary.LittleEndian.PutUint64(rec[24:], 7000)
	copy(rec[tracing.APICompactSize:], blob)

	b := spooltest.New(testProcess)
	b.AddRaw(rec)
	r, err := tracing.NewReader(b.Bytes())
	require.NoError(t, err)
	require.True(t, r.Next())
	c := r.RCCLCall()
	require.Equal(t, "ncclGetErrorString", c.Name())
	require.Equal(t, uint64(18), c.CorrelationID)
	require.Equal(t, uint64(19), c.EndCorrelationID)
	require.Equal(t, uint64(7000), c.Start)
	require.Equal(t, uint64(7250), c.End)
	require.Equal(t, [][]byte{u32(0xabcd)}, c.Args)
	require.False(t, r.Next())
	require.Zero(t, r.Stats().Skipped)
}

// The Go table and the preload library's (rccl_trace.c) list the same
// functions in the same order: the record's function id is the index in
// both, and rocprofv3's rocprofiler_rccl_api_id_t.
func TestRCCLFunctionTable(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "hsa", "preload", "rccl_trace.c"))
	require.NoError(t, err)
	var cNames []string
	for _, m := range regexp.MustCompile(`(?m)^\s+X\((\w+)\)`).FindAllSubmatch(src, -1) {
		cNames = append(cNames, string(m[1]))
	}
	var goNames []string
	for _, f := range tracing.RCCLFunctions {
		goNames = append(goNames, f.Name)
	}
	require.Len(t, goNames, 37, "rocprofv3's RCCL_API domain has 37 functions")
	require.Equal(t, goNames, cNames)
	require.Equal(t, "ncclAllGather", tracing.RCCLFunctionName(0))
	require.Equal(t, "ncclCommDeregister", tracing.RCCLFunctionName(36))
	require.Equal(t, "", tracing.RCCLFunctionName(37))
	require.Equal(t, "RCCL_API", tracing.DomainRCCL.String())
	require.Equal(t, "RCCL_API", tracing.KindRCCLAPI.String())
}
