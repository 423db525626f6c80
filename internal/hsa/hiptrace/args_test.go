package hiptrace

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// argMap decodes a call's arguments into name -> value.
func argMap(t *testing.T, c tracing.APICall) map[string]string {
	args, err := DecodeArgs(c.Function, c.Args)
	require.NoError(t, err)
	m := map[string]string{}
	for i, a := range args {
		require.Equal(t, i, a.Position)
		m[a.Name] = a.Value
	}
	return m
}

func TestHIPArgumentsRecordedWhenAsked(t *testing.T) {
	_, dir := run{app: "testdata/hip_calls_counts", preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_OUTPUT_FORMAT=csv,rocpd"}}.exec(t)
	tr := readTrace(t, dir)
	var launches []map[string]string
	memcpyKinds := []string{}
	for _, c := range tr.calls {
		m := argMap(t, c)
		require.Len(t, m, len(Params(c.Function)), tr.name(c))
		switch tr.name(c) {
		case "hipMalloc":
			require.Equal(t, "4096", m["size"])
			require.Regexp(t, "^0x[0-9a-f]+$", m["ptr"])
		case "hipMemcpy":
			require.Equal(t, "4096", m["sizeBytes"])
			memcpyKinds = append(memcpyKinds, m["kind"])
		case "hipLaunchKernel":
			launches = append(launches, m)
		}
	}
	// hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2.
	require.Equal(t, []string{"1", "1", "2"}, memcpyKinds)
	require.Len(t, launches, 6)
	for i, m := range launches {
		require.Equal(t, "{4, 1, 1}", m["numBlocks"])
		require.Equal(t, "{256, 1, 1}", m["dimBlocks"])
		require.Equal(t, "0", m["sharedMemBytes"])
		if i < 4 {
			require.Equal(t, "0x0", m["stream"])
		} else {
			require.NotEqual(t, "0x0", m["stream"], "arguments keep the handle itself")
		}
	}

	// CSV alone does not show arguments: none are recorded.
	_, dir = run{app: "testdata/hip_calls_counts", preload: true,
		env: []string{"ROCPROF_HIP_RUNTIME_API_TRACE=1", "ROCPROF_OUTPUT_FORMAT=csv"}}.exec(t)
	for _, c := range readTrace(t, dir).calls {
		require.Empty(t, c.Args)
	}
}

func TestDecodeArgsFormats(t *testing.T) {
	id := func(name string) uint32 {
		for i, n := range functionNames {
			if n == name {
				return uint32(i)
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	put := func(blob []byte, v []byte) []byte {
		blob = binary.LittleEndian.AppendUint32(blob, uint32(len(v)))
		blob = append(blob, v...)
		for len(blob)%4 != 0 {
			blob = append(blob, 0)
		}
		return blob
	}
	// hipTexRefSetMipmapLevelClamp(textureReference*, float, float)
	var blob []byte
	blob = put(blob, binary.LittleEndian.AppendUint64(nil, 0xdead0))
	blob = put(blob, binary.LittleEndian.AppendUint32(nil, math.Float32bits(-1.5)))
	blob = put(blob, binary.LittleEndian.AppendUint32(nil, math.Float32bits(2)))
	args, err := DecodeArgs(id("hipTexRefSetMipmapLevelClamp"), blob)
	require.NoError(t, err)
	require.Len(t, args, 3)
	require.Equal(t, Arg{0, "textureReference*", "texRef", "0xdead0"}, args[0])
	require.Equal(t, "-1.5", args[1].Value)
	require.Equal(t, "2", args[2].Value)

	// hipDeviceGetAttribute(int*, hipDeviceAttribute_t, int): signed ints.
	blob = put(nil, binary.LittleEndian.AppendUint64(nil, 8))
	blob = put(blob, binary.LittleEndian.AppendUint32(nil, 3))
	blob = put(blob, binary.LittleEndian.AppendUint32(nil, uint32(0xffffffff)))
	args, err = DecodeArgs(id("hipDeviceGetAttribute"), blob)
	require.NoError(t, err)
	require.Equal(t, "-1", args[2].Value)

	// A blob longer than the parameter list is an error, not a panic.
	_, err = DecodeArgs(id("hipGetDevice"), append(put(nil, make([]byte, 8)), put(nil, make([]byte, 8))...))
	require.Error(t, err)
	_, err = DecodeArgs(uint32(len(functionNames)), nil)
	require.Error(t, err)
}
