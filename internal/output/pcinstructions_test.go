package output

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// TestPCInstructionsOfMemoryCodeObjects: a memory:// code object is read
// from the copy the shim kept beside the spool (<spool>.codeobj.<id>), so
// its samples get their instruction and source line; one without a copy
// stays unrecognised (rocprofv3's comment), and a file:// one is read from
// its file.
func TestPCInstructionsOfMemoryCodeObjects(t *testing.T) {
	elf := filepath.Join("..", "..", "testdata", "codeobjects", "module_fill_dwarf_gfx90a.elf")
	data, err := os.ReadFile(elf)
	require.NoError(t, err)
	abs, err := filepath.Abs(elf)
	require.NoError(t, err)
	dir := t.TempDir()
	spool := filepath.Join(dir, "rpg-1-2-0.spool")
	require.NoError(t, os.WriteFile(spool+pcsCodeObjectSuffix+"3", data, 0o600))
	const delta = 0x7f0000000000
	co := func(id uint64, uri string, base uint64) tracing.CodeObject {
		return tracing.CodeObject{CodeObjectID: id, Operation: tracing.CodeObjectLoad, AgentNode: 1,
			LoadBase: base, LoadSize: 0x3000, LoadDelta: base, URI: []byte(uri)}
	}
	s := &model.PCSamples{Spool: spool, CodeObjects: []tracing.CodeObject{
		co(3, "memory://1#offset=0x1000&size=33784", delta),
		co(4, "memory://1#offset=0x9000&size=33784", delta+0x10000), // no copy
		co(5, "file://"+abs, delta+0x20000),
	}}
	pi := newPCInstructions(s)
	defer pi.Close()
	require.False(t, pi.NoObjdump(), "llvm-objdump on PATH")
	sample := func(id, vaddr uint64) *model.PCSample {
		return &model.PCSample{CodeObjectID: id, VAddr: vaddr}
	}
	for _, id := range []uint64{3, 5} {
		text, known := pi.Text(sample(id, 0x1960))
		require.True(t, known, "code object %d", id)
		require.Equal(t, "s_endpgm", text)
		require.Equal(t, "/src/rocprof-go/testdata/apps/module_kernels.cpp:7", pi.Comment(sample(id, 0x1960)))
		text, _ = pi.Text(sample(id, 0x1958))
		require.Equal(t, "global_store_dword v[0:1], v2, off", text)
	}
	_, known := pi.Text(sample(4, 0x1960))
	require.False(t, known)
	require.Equal(t, "", pi.Comment(sample(4, 0x1960)))
}
