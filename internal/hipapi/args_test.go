package hipapi

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

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
