package output

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPCLinesFromDWARF: a PC's comment is the source line of the last
// line-table row at or below it, with the call sites of the inlined
// functions holding that row (innermost first), as rocprofv3 forms it; a
// row of line 0 gives nothing (the PC keeps the row before); a PC before the
// first row or past the code object has none; a code object without a
// line table gives "" everywhere. The fixture's rows and inlined calls are
// llvm-dwarfdump's (testdata/codeobjects/README.md).
func TestPCLinesFromDWARF(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codeobjects", "module_fill_dwarf_gfx90a.elf"))
	require.NoError(t, err)
	pl := readPCLines(data)
	require.NotNil(t, pl)
	const src = "/src/rocprof-go/testdata/apps/module_kernels.cpp"
	const rt = "/usr/include/hip/amd_detail/amd_hip_runtime.h"
	blockDim := rt + ":264 -> " + rt + ":296 -> " + src + ":5"
	blockIdx := rt + ":259 -> " + rt + ":287 -> " + src + ":5"
	for addr, want := range map[uint64]string{
		0x18fc:            "", // before the kernel's first row
		0x1900:            blockDim,
		0x1904:            blockDim, // between rows: the row below
		0x1908:            blockIdx,
		0x1910:            blockDim,
		0x191c:            src + ":5", // out of the inlined ranges
		0x1924:            src + ":6",
		0x1930:            blockIdx,
		0x1944:            blockIdx, // the row of line 0 is skipped
		0x1954:            src + ":6",
		0x1960:            src + ":7",
		0x1964:            src + ":7", // the end of the sequence
		0x1a00:            src + ":7", // the last row reaches to the code object's size
		uint64(len(data)): "",
	} {
		require.Equal(t, want, pl.at(addr), "%#x", addr)
	}
	// No line table: no comment.
	stripped := bytes.ReplaceAll(data, []byte(".debug_line\x00"), []byte(".xebug_line\x00"))
	require.NotEqual(t, data, stripped)
	require.Nil(t, readPCLines(stripped))
	require.Equal(t, "", readPCLines(stripped).at(0x1900))
	require.Nil(t, readPCLines([]byte("not an ELF")))
}
