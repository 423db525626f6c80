package tracing_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// TestABI compiles spool.h and checks that the Go reader's idea of every
// record's fixed size matches the C structs.
func TestABI(t *testing.T) {
	src := `#include "spool.h"
#include <stdio.h>
#include <stddef.h>
int main(void) {
  printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
    sizeof(rpg_string_rec), sizeof(rpg_api_rec), sizeof(rpg_api_rec), sizeof(rpg_marker_rec),
    sizeof(rpg_kernel_dispatch_rec), sizeof(rpg_memory_copy_rec),
    sizeof(rpg_memory_allocation_rec), sizeof(rpg_scratch_memory_rec),
    sizeof(rpg_kernel_symbol_rec), sizeof(rpg_code_object_rec), sizeof(rpg_agent_info_rec),
    sizeof(rpg_counter_sample_rec), sizeof(rpg_spool_header));
  printf("%zu %zu\n", sizeof(rpg_api_rec2), offsetof(rpg_api_rec2, correlation_id));
  printf("%zu %zu %zu %zu\n", offsetof(rpg_kernel_dispatch_rec, grid),
    offsetof(rpg_agent_info_rec, logical_node_type_id), offsetof(rpg_agent_info_rec, name),
    offsetof(rpg_spool_header, fork_generation));
  printf("%zu %d %d\n", sizeof(rpg_rccl_tail), RPG_KIND_RCCL_API, RPG_API_RCCL);
  printf("%zu %zu %zu %d %d %d %d %zu %zu\n", sizeof(rpg_pc_sample_rec), sizeof(rpg_pc_sample_hosttrap),
    sizeof(rpg_pc_sample_dispatch_rec), RPG_KIND_PC_SAMPLE, RPG_KIND_PC_SAMPLE_DISPATCH,
    RPG_PC_SAMPLING_METHOD_STOCHASTIC, RPG_PC_SAMPLING_METHOD_HOST_TRAP,
    offsetof(rpg_pc_sample_rec, method), offsetof(rpg_pc_sample_hosttrap, perf_snapshot_data));
  printf("%zu %zu\n", offsetof(rpg_kernel_symbol_rec, entry_offset), sizeof(((rpg_kernel_symbol_rec *)0)->entry_offset));
  printf("%zu %zu %zu %u %zu %u\n", offsetof(rpg_spool_header, chunks_abandoned), offsetof(rpg_spool_header, store_errno),
    offsetof(rpg_spool_header, flags), RPG_HEADER_COUNTS_ABANDONED, offsetof(rpg_spool_header, chunks_headed),
    RPG_HEADER_COUNTS_HEADED);
  printf("%zu %zu %zu %u %u %u 0x%x\n", offsetof(rpg_spool_header, stop), offsetof(rpg_spool_header, stop_seen), offsetof(rpg_spool_header, chunk_limit),
    RPG_HEADER_SEALS, RPG_STOP_SHM_SHARE, RPG_STOP_OUTPUT_FULL, RPG_CHUNK_SEALED);
  return 0;
}`
	dir := t.TempDir()
	c := filepath.Join(dir, "abi.c")
	require.NoError(t, writeFile(c, src))
	bin := filepath.Join(dir, "abi")
	out, err := exec.Command("gcc", "-std=c11", "-Wall", "-Werror", "-I.", "-o", bin, c).CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command(bin).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 8)
	var sizes []uint32
	for _, f := range strings.Fields(lines[0]) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		sizes = append(sizes, uint32(n))
	}
	kinds := []tracing.Kind{tracing.KindString, tracing.KindHIPAPI, tracing.KindHSAAPI,
		tracing.KindMarker, tracing.KindKernelDispatch, tracing.KindMemoryCopy,
		tracing.KindMemoryAllocation, tracing.KindScratchMemory, tracing.KindKernelSymbol,
		tracing.KindCodeObject, tracing.KindAgentInfo, tracing.KindCounterSample}
	for i, k := range kinds {
		require.Equal(t, sizes[i], tracing.FixedSize(k), "%v", k)
	}
	require.Equal(t, uint32(tracing.HeaderFixedSize), sizes[12])
	require.Equal(t, strconv.Itoa(tracing.APICompactSize)+" 16", lines[1])
	require.Equal(t, "72 400 408 88", lines[2])
	require.Equal(t, fmt.Sprintf("8 %d %d", tracing.KindRCCLAPI, tracing.DomainRCCL), lines[3])
	// rpg_pc_sample_rec is the record's version 2 (32 bytes, with the
	// method word); FixedSize is version 1's 24, which spools kept from
	// before stochastic sampling hold.
	require.Equal(t, uint32(24), tracing.FixedSize(tracing.KindPCSample))
	require.Equal(t, fmt.Sprintf("32 %d %d %d %d %d %d 24 36", tracing.PCSampleSize,
		tracing.FixedSize(tracing.KindPCSampleDispatch), tracing.KindPCSample, tracing.KindPCSampleDispatch,
		tracing.PCSamplingStochastic, tracing.PCSamplingHostTrap), lines[4])
	// The entry offset took the symbol record's last reserved word, which
	// older spools leave 0 (unknown).
	require.Equal(t, "60 4", lines[5])
	// The header's store and headed-chunk fields (process.go decodes them
	// at these offsets).
	require.Equal(t, fmt.Sprintf("96 104 108 %d 112 %d", tracing.HeaderCountsAbandoned, tracing.HeaderCountsHeaded), lines[6])
	// The drain's fields (drain.go writes stop at this offset).
	require.Equal(t, fmt.Sprintf("120 124 128 %d %d %d 0x%x", tracing.HeaderSeals, tracing.StopShmShare, tracing.StopOutputFull, tracing.ChunkSealed), lines[7])
}
