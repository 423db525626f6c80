package parquet

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// PC samples are <prefix>_pc_sampling_host_trap.parquet, one row per
// sample with its dispatch, kernel, PC and instruction, read back by
// DuckDB.
func TestParquetPCSamples(t *testing.T) {
	prefix := outputtest.TempPrefix(t)
	in := outputtest.PCSampleInput(t)
	require.NoError(t, Write(prefix, in))
	f := prefix + "_pc_sampling_host_trap.parquet"
	require.Equal(t, []File{{Path: f, Domain: "PC_SAMPLING_HOST_TRAP", Rows: 9}}, Files(prefix, &in.Config)[len(Files(prefix, &in.Config))-1:])
	q := func(sql string) string {
		return outputtest.DuckDB(t, fmt.Sprintf(sql, "read_parquet("+outputtest.SQLStr(f)+")"))[0]
	}
	require.Equal(t, "9", q(`SELECT count(*) FROM %s`))
	cols := `pid, tid, agent_id, dispatch_id, correlation_id, kernel_id, kernel_name, timestamp_ns, code_object_id,
		code_object_offset, pc, exec_mask, workgroup_x, workgroup_y, workgroup_z, wave_in_group, chiplet, hw_id,
		instruction, instruction_comment`
	row := func(i int) string {
		return q(`SELECT concat_ws('|', ` + cols + `) FROM (SELECT *, row_number() OVER () AS r FROM %s) WHERE r = ` + fmt.Sprint(i))
	}
	hw := fmt.Sprint(outputtest.PCSampleHWID)
	va := "vectorAdd_float(float*, float const*, float const*, int)"
	require.Equal(t, "100|100|1|1|1|1|"+va+"|100002050|1|16|139637976727568|18446744073709551615|7|1|2|5|2|"+hw+"|s_nop 0x10|k.cpp:16", row(1))
	require.Equal(t, "100|100|1|1|1|1|"+va+"|100002050|0|4660|4660|18446744073709551615|7|1|2|5|2|"+hw+
		"||Unrecognized code object id, physical virtual address of PC:4660", row(4))
	require.Equal(t, "100|101|2|2|3|2|void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)|100012100|1|48|139637976727600|15|0|0|0|0|0|0|s_nop 0x30|k.cpp:48", row(7))
	require.Equal(t, "100|101|2|4|7|1|"+va+"|100032100|1|64|139637976727616|255|0|0|0|0|0|0|s_nop 0x40|k.cpp:64", row(9))
	// The hottest instruction, as summary finds it.
	require.Equal(t, "s_nop 0x10\t4", q(`SELECT instruction, count(*) n FROM %s GROUP BY 1 ORDER BY n DESC LIMIT 1`))
	// zstd, and the string columns dictionary-encoded.
	require.Equal(t, []string{"ZSTD\ttrue"}, outputtest.DuckDB(t, `SELECT string_agg(DISTINCT compression, ','),
		bool_and(encodings LIKE '%RLE_DICTIONARY%') FILTER (WHERE type = 'BYTE_ARRAY') FROM parquet_metadata(`+outputtest.SQLStr(f)+`)`))
}

// Stochastic samples: their own file, with the snapshot's columns.
func TestParquetPCSamplesStochastic(t *testing.T) {
	prefix := outputtest.TempPrefix(t)
	in := &model.Input{Spools: []string{outputtest.PCSampleStochasticSpool(t, t.TempDir())}}
	require.NoError(t, Write(prefix, in))
	f := prefix + "_pc_sampling_stochastic.parquet"
	got := outputtest.DuckDB(t, fmt.Sprintf(`SELECT string_agg(concat_ws('|', code_object_offset, wave_issued, inst_type,
		stall_reason, wave_count, dual_issue_valu), ';') FROM read_parquet(%s)`, outputtest.SQLStr(f)))
	p := "ROCPROFILER_PC_SAMPLING_"
	require.Equal(t, strings.Join([]string{
		"16|1|" + p + "INSTRUCTION_TYPE_VALU|" + p + "INSTRUCTION_NOT_ISSUED_REASON_NO_INSTRUCTION_AVAILABLE|12|0",
		"16|0|" + p + "INSTRUCTION_TYPE_VALU|" + p + "INSTRUCTION_NOT_ISSUED_REASON_WAITCNT|12|0",
		"32|0|" + p + "INSTRUCTION_TYPE_VALU|" + p + "INSTRUCTION_NOT_ISSUED_REASON_WAITCNT|12|0",
		"16|0|" + p + "INSTRUCTION_TYPE_VALU|" + p + "INSTRUCTION_NOT_ISSUED_REASON_WAITCNT|12|0",
		"16|0|" + p + "INSTRUCTION_TYPE_VALU|" + p + "INSTRUCTION_NOT_ISSUED_REASON_ALU_DEPENDENCY|12|0",
		"32|0|" + p + "INSTRUCTION_TYPE_VALU|" + p + "INSTRUCTION_NOT_ISSUED_REASON_WAITCNT|12|0",
		"48|1|" + p + "INSTRUCTION_TYPE_SCALAR|" + p + "INSTRUCTION_NOT_ISSUED_REASON_NO_INSTRUCTION_AVAILABLE|12|0",
	}, ";"), got[0])
}

// With the hive layout the PC samples are one more domain= partition.
func TestParquetPCSamplesHive(t *testing.T) {
	in := outputtest.PCSampleInput(t)
	in.Config.ParquetHive, in.Config.ParquetRank, in.Config.ParquetHost = true, 3, "node0"
	dir := t.TempDir()
	require.NoError(t, Write(filepath.Join(dir, "out"), in))
	p := filepath.Join(dir, "domain=pc_sampling_host_trap", "rank=3", "host=node0", "out.parquet")
	got := outputtest.DuckDB(t, fmt.Sprintf(`SELECT count(*), rank, host FROM read_parquet(%s, hive_partitioning = true) GROUP BY ALL`,
		outputtest.SQLStr(filepath.Join(dir, "domain=pc_sampling_host_trap", "*", "*", "*.parquet"))))
	require.Equal(t, "9\t3\tnode0", got[0])
	require.FileExists(t, p)
}

// With --kernel-rename a sample's kernel_name is its dispatch's in
// kernels.parquet: the enclosing ROCTx range's name for dispatch 4,
// the mark's before it for dispatch 2, the kernel's for vectorAdd's
// dispatch 1.
func TestParquetPCSamplesKernelRename(t *testing.T) {
	for _, rename := range []bool{false, true} {
		prefix := outputtest.TempPrefix(t)
		in := &model.Input{Spools: []string{outputtest.PCSampleRenameSpool(t, t.TempDir())}}
		in.Config.KernelRename = rename
		require.NoError(t, Write(prefix, in))
		pcs, kernels := outputtest.SQLStr(prefix+"_pc_sampling_host_trap.parquet"), outputtest.SQLStr(prefix+"_kernels.parquet")
		got := outputtest.DuckDB(t,
			`SELECT string_agg(concat_ws('|', dispatch_id, kernel_name), ';') FROM read_parquet(`+pcs+`)`,
			`SELECT count(*) FROM read_parquet(`+pcs+`) s JOIN read_parquet(`+kernels+`) k USING (dispatch_id)
			 WHERE s.kernel_name = k.kernel_name`)
		va, scan := "vectorAdd_float(float*, float const*, float const*, int)", "void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)"
		d2, d4 := scan, va
		if rename {
			d2, d4 = "checkpoint", outputtest.PCSampleRenameRange
		}
		require.Equal(t, strings.Repeat("1|"+va+";", 6)+"2|"+d2+";4|"+d4+";4|"+d4, got[0], "rename %v", rename)
		require.Equal(t, "9", got[1], "every sample named as its dispatch's row")
	}
}
