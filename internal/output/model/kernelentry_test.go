package model_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// A kernel's kernel_code_entry_byte_offset is its descriptor's (NAME.kd)
// int64 at byte 16, read from the code object of a file:// URI (with its
// offset and size) or from the shim's copy beside the spool for a
// memory:// one; an unreadable code object leaves its kernels out. The
// fixture's module_fill.kd is at 0x800 and module_fill at 0x1900
// (llvm-readelf -s), so the offset is 0x1100. That file is the fallback
// for spools from before the symbol record carried the offset.
func TestKernelCodeEntryOffsets(t *testing.T) {
	fixture, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "codeobjects", "module_fill_dwarf_gfx90a.elf"))
	require.NoError(t, err)
	data, err := os.ReadFile(fixture)
	require.NoError(t, err)
	dir := t.TempDir()
	// The code object inside a bigger file, as HIP's fat binaries hold it.
	fat := filepath.Join(dir, "app")
	require.NoError(t, os.WriteFile(fat, append(make([]byte, 4096), data...), 0o600))
	spool := filepath.Join(dir, "run.spool")
	require.NoError(t, os.WriteFile(spool+model.PCSCodeObjectSuffix+"2", data, 0o600))

	sym := func(kid, co uint64) *model.KernelSymbol {
		return &model.KernelSymbol{KernelSymbol: tracing.KernelSymbol{KernelID: kid, CodeObjectID: co}, Raw: "module_fill.kd"}
	}
	p := &model.Catalogue{
		Info: tracing.ProcessInfo{Path: spool},
		CodeObjects: []tracing.CodeObject{
			{CodeObjectID: 1, Operation: tracing.CodeObjectLoad, URI: []byte("file://" + fat + "#offset=4096&size=" + strconv.Itoa(len(data)))},
			{CodeObjectID: 2, Operation: tracing.CodeObjectLoad, URI: []byte("memory://1#offset=0x1000&size=10")},
			{CodeObjectID: 3, Operation: tracing.CodeObjectLoad, URI: []byte("memory://1#offset=0x2000&size=10")}, // no copy
		},
		Symbols: map[uint64]*model.KernelSymbol{1: sym(1, 1), 2: sym(2, 2), 3: sym(3, 3)},
	}
	require.Equal(t, map[uint64]int64{1: 0x1100, 2: 0x1100}, p.KernelCodeEntryOffsets())

	// The shim's record of the descriptor wins over the file (and needs
	// none: kernel 4's code object has no copy); kernel_address adds it to
	// kernel_object.
	p.Symbols[4] = sym(4, 3)
	p.Symbols[4].EntryOffset, p.Symbols[4].KernelObject = 0x1180, 0x7f00_0000_0f80
	p.Symbols[1].EntryOffset = 0x1234
	require.Equal(t, map[uint64]int64{1: 0x1234, 2: 0x1100, 4: 0x1180}, p.KernelCodeEntryOffsets())
	e := p.KernelEntries()
	require.Equal(t, model.KernelEntry{Offset: 0x1180, Address: 0x7f00_0000_2100}, e[4])
	require.Equal(t, model.KernelEntry{}, e[3])
}
