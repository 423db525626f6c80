package rocpdread

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The extdata parser reads what encoding/json reads, and hands what it
// does not know to it.
func TestParsePCSampleExt(t *testing.T) {
	for _, ext := range []string{
		`{"dispatch_id":1,"code_object_id":1,"code_object_offset":16,"pc":139637976727568,"exec_mask":18446744073709551615,` +
			`"wrkgrp_id":{"x":7,"y":1,"z":2},"wave_in_grp":5,"chiplet":2,"hw_id":1113879907,"instruction":"s_nop 0x10",` +
			`"instruction_comment":"k.cpp:16"}`,
		`{"dispatch_id":1,"code_object_id":0,"code_object_offset":4660,"pc":4660,"exec_mask":15,"wrkgrp_id":{"x":0,"y":0,"z":0},` +
			`"wave_in_grp":0,"chiplet":0,"hw_id":0,"instruction":"v_mov \"a\\b\" \u00e9\n","instruction_comment":"Unrecognized code object id, physical virtual address of PC:4660",` +
			`"wave_issued":false,"inst_type":"VALU","stall_reason":"WAITCNT","wave_count":12,"dual_issue_valu":true,"snapshot":[257,12,0]}`,
		`{ "dispatch_id" : 3 , "pc" : 1, "other": {"a": [1, 2]}, "instruction": "x" }`, // an unknown key
		`{}`,
	} {
		var want PCSampleExt
		require.NoError(t, json.Unmarshal([]byte(ext), &want))
		var got PCSampleExt
		texts := map[string]string{}
		require.NoError(t, parsePCSampleExt([]byte(ext), &got, texts))
		require.Equal(t, want, got, ext)
	}
	var e PCSampleExt
	require.Error(t, parsePCSampleExt([]byte(`{"pc":`), &e, map[string]string{}))
	require.Error(t, parsePCSampleExt([]byte(`{"pc":18446744073709551616}`), &e, map[string]string{}))
}
