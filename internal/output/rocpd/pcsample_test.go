package rocpd

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// Host-trap PC samples are rocpd_sample rows on a "PC samples" track per
// agent, each with an event of category PC_SAMPLING_HOST_TRAP that has
// the dispatch's correlation ids and the sample in extdata; the samples
// view lists them.
func TestROCpdPCSamples(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, Write(db, outputtest.PCSampleInput(t)))
	q := func(sql string) string { return outputtest.SQLite3CLI(t, db, sql) }
	require.Equal(t, "9", q("SELECT COUNT(*) FROM samples WHERE category = 'PC_SAMPLING_HOST_TRAP'"))
	// One track per agent, named PC samples, on the thread of the agent's
	// first sampled dispatch.
	require.Equal(t, "PC samples|1|100|100\nPC samples|2|101|100",
		q(`SELECT s.string, json_extract(t.extdata, '$.agent_id'), th.tid, th.pid FROM rocpd_track t
		   JOIN rocpd_string s ON s.id = t.name_id JOIN rocpd_info_thread th ON th.id = t.tid
		   WHERE s.string = 'PC samples' ORDER BY t.id`))
	rows := q(`SELECT timestamp, stack_id, parent_stack_id, corr_id, name, extdata FROM samples
		WHERE category = 'PC_SAMPLING_HOST_TRAP' ORDER BY id`)
	lines := strings.Split(rows, "\n")
	require.Len(t, lines, 9)
	ext := func(d, off, pc uint64, mask string, wg, wave, chiplet, hw string, text, comment string) string {
		co := "1"
		if text == "" {
			co = "0"
		} else {
			comment = "k.cpp:" + u(off) // FakePCInstructions' source line
		}
		return `{"dispatch_id":` + u(d) + `,"code_object_id":` + co + `,"code_object_offset":` + u(off) +
			`,"pc":` + u(pc) + `,"exec_mask":` + mask + `,"wrkgrp_id":` + wg + `,"wave_in_grp":` + wave +
			`,"chiplet":` + chiplet + `,"hw_id":` + hw + `,"instruction":"` + text + `","instruction_comment":"` + comment + `"}`
	}
	hw := u(uint64(outputtest.PCSampleHWID))
	all, wg7 := "18446744073709551615", `{"x":7,"y":1,"z":2}`
	wg0 := `{"x":0,"y":0,"z":0}`
	want := []string{
		"100002050|1|1|0|PC samples|" + ext(1, 0x10, 0x7f0000000010, all, wg7, "5", "2", hw, "s_nop 0x10", ""),
		"100002050|1|1|0|PC samples|" + ext(1, 0x20, 0x7f0000000020, all, wg7, "5", "2", hw, "s_nop 0x20", ""),
		"100002050|1|1|0|PC samples|" + ext(1, 0x10, 0x7f0000000010, all, wg7, "5", "2", hw, "s_nop 0x10", ""),
		"100002050|1|1|0|PC samples|" + ext(1, 0x1234, 0x1234, all, wg7, "5", "2", hw, "",
			"Unrecognized code object id, physical virtual address of PC:4660"),
		"100002050|1|1|0|PC samples|" + ext(1, 0x10, 0x7f0000000010, all, wg7, "5", "2", hw, "s_nop 0x10", ""),
		"100002050|1|1|0|PC samples|" + ext(1, 0x20, 0x7f0000000020, all, wg7, "5", "2", hw, "s_nop 0x20", ""),
		"100012100|3|3|0|PC samples|" + ext(2, 0x30, 0x7f0000000030, "15", wg0, "0", "0", "0", "s_nop 0x30", ""),
		"100032100|7|7|0|PC samples|" + ext(4, 0x10, 0x7f0000000010, "255", wg0, "0", "0", "0", "s_nop 0x10", ""),
		"100032100|7|7|0|PC samples|" + ext(4, 0x40, 0x7f0000000040, "255", wg0, "0", "0", "0", "s_nop 0x40", ""),
	}
	require.Equal(t, want, lines)
	// The samples sit in their dispatch's run, and the extdata's code
	// object is the code object row.
	require.Equal(t, "9", q(`SELECT COUNT(*) FROM samples s JOIN kernels k ON k.dispatch_id = json_extract(s.extdata, '$.dispatch_id')
		WHERE s.category = 'PC_SAMPLING_HOST_TRAP' AND s.timestamp BETWEEN k.start AND k."end" AND k.corr_id = 0 AND k.stack_id = s.stack_id`))
	require.Equal(t, "file:///app#offset=0&size=4096", q(`SELECT DISTINCT c.uri FROM samples s
		JOIN rocpd_info_code_object c ON c.id = json_extract(s.extdata, '$.code_object_id') WHERE s.category = 'PC_SAMPLING_HOST_TRAP'`))
	require.Empty(t, q("PRAGMA foreign_key_check"))
	require.Equal(t, "ok", q("PRAGMA integrity_check"))
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// Stochastic samples: category PC_SAMPLING_STOCHASTIC, and the snapshot's
// fields (and raw words) in extdata.
func TestROCpdPCSamplesStochastic(t *testing.T) {
	in := &model.Input{Spools: []string{outputtest.PCSampleStochasticSpool(t, t.TempDir())}}
	in.Config.PCInstructions = func(*model.PCSamples) model.PCInstructions { return outputtest.FakePCInstructions{} }
	db := filepath.Join(t.TempDir(), "results.db")
	require.NoError(t, Write(db, in))
	q := func(sql string) string { return outputtest.SQLite3CLI(t, db, sql) }
	require.Equal(t, "PC_SAMPLING_STOCHASTIC|7", q("SELECT category, COUNT(*) FROM samples WHERE category LIKE 'PC_SAMPLING%' GROUP BY category"))
	require.Equal(t, `{"dispatch_id":1,"code_object_id":1,"code_object_offset":16,"pc":139637976727568,"exec_mask":65535,`+
		`"wrkgrp_id":{"x":0,"y":0,"z":0},"wave_in_grp":0,"chiplet":0,"hw_id":`+u(uint64(outputtest.PCSampleHWID))+
		`,"instruction":"s_nop 0x10","instruction_comment":"k.cpp:16","wave_issued":false,"inst_type":"VALU",`+
		`"stall_reason":"WAITCNT","wave_count":12,"dual_issue_valu":false,"snapshot":[257,12,0]}`,
		q("SELECT extdata FROM samples WHERE category = 'PC_SAMPLING_STOCHASTIC' ORDER BY id LIMIT 1 OFFSET 1"))
	require.Equal(t, "WAITCNT|4\nALU_DEPENDENCY|1\nNO_INSTRUCTION_AVAILABLE|2", q(`SELECT json_extract(extdata, '$.stall_reason'), COUNT(*) FROM samples
		WHERE category = 'PC_SAMPLING_STOCHASTIC' GROUP BY 1 ORDER BY json_extract(extdata, '$.wave_issued'), 2 DESC`))
}
