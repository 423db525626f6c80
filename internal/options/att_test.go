package options

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func resolveErr(args ...string) error {
	cl, err := ParseArgs(args)
	if err != nil {
		return err
	}
	_, err = Resolve(cl, Sources{LookupEnv: noEnv})
	return err
}

func TestATTCountersParsing(t *testing.T) {
	cs, err := ParseATTCounters("sq_waves SQ_BUSY_CYCLES:3,SQ_INSTS_VALU:0xC")
	require.NoError(t, err)
	require.Equal(t, []ATTCounter{{"SQ_WAVES", 0xF}, {"SQ_BUSY_CYCLES", 3}, {"SQ_INSTS_VALU", 0xC}}, cs)
	require.Equal(t, "SQ_BUSY_CYCLES:3", cs[1].String())
	require.Equal(t, "SQ_WAVES", cs[0].String())
	for _, bad := range []string{"GRBM_COUNT", "SQ_WAVES:0", "SQ_WAVES:10", "SQ_WAVES:z", ":3",
		"SQ_A SQ_B SQ_C SQ_D SQ_E SQ_F SQ_G SQ_H SQ_I"} {
		_, err := ParseATTCounters(bad)
		require.Error(t, err, bad)
	}
}

// The combinations rocprofv3 refuses (tests-catalog #29's expected failures).
func TestATTValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--att", "--att-activity", "4", "--pmc", "SQ_WAVES", "--", "app"}, "--att-activity"},
		{[]string{"--att", "--att-activity", "4", "--att-perfcounter-ctrl", "2", "--", "app"}, "--att-activity"},
		{[]string{"--att", "--att-activity", "17", "--", "app"}, "between 1 and 16"},
		{[]string{"--att", "--att-perfcounters", "SQ_WAVES", "--pmc", "SQ_WAVES", "--", "app"}, "cannot be combined with --pmc"},
		{[]string{"--att", "--att-perfcounter-ctrl", "33", "--", "app"}, "between 1 and 32"},
		{[]string{"--att", "--att-perfcounters", "TA_BUSY", "--att-perfcounter-ctrl", "2", "--", "app"}, "only SQ counters"},
		{[]string{"--att", "--att-library-path", "/nonexistent/dir", "--", "app"}, "--att-library-path"},
	} {
		err := resolveErr(tc.args...)
		require.ErrorContains(t, err, tc.want, tc.args)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ATTDecoderLibrary), nil, 0o644))
	require.NoError(t, resolveErr("--att", "--att-library-path", "/nonexistent", dir, "--", "app"))
	// Without --att the path is not looked at, as rocprofv3 only uses it for ATT.
	require.NoError(t, resolveErr("--att-library-path", "/nonexistent", "--kernel-trace", "--", "app"))
}

func TestATTStreamedCountersEnv(t *testing.T) {
	p := resolve(t, "--att", "--att-perfcounters", "sq_waves SQ_BUSY_CYCLES:3", "--att-perfcounter-ctrl", "4", "--", "app")
	env := p.Passes[0].ToolEnv("/o")
	require.Equal(t, "SQ_WAVES SQ_BUSY_CYCLES:3", env["ROCPROF_ATT_PARAM_PERFCOUNTERS"])
	require.Equal(t, "4", env["ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL"])

	p = resolve(t, "--att", "--att-activity", "8", "--", "app")
	env = p.Passes[0].ToolEnv("/o")
	require.Equal(t, "SQ_BUSY_CU_CYCLES SQ_VALU_MFMA_BUSY_CYCLES SQ_ACTIVE_INST_VALU SQ_ACTIVE_INST_LDS "+
		"SQ_ACTIVE_INST_VMEM SQ_ACTIVE_INST_FLAT SQ_ACTIVE_INST_SCA SQ_ACTIVE_INST_MISC", env["ROCPROF_ATT_PARAM_PERFCOUNTERS"])
	require.Equal(t, "8", env["ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL"])

	// Counters without a period: accepted with a warning, nothing streamed.
	p = resolve(t, "--att", "--att-perfcounters", "SQ_WAVES", "--", "app")
	require.Contains(t, p.Warnings[len(p.Warnings)-1], "--att-perfcounter-ctrl")
	env = p.Passes[0].ToolEnv("/o")
	require.NotContains(t, env, "ROCPROF_ATT_PARAM_PERFCOUNTER_CTRL")

	p = resolve(t, "--att", "--att-serialize-all", "--", "app")
	require.Equal(t, "1", p.Passes[0].ToolEnv("/o")["ROCPROF_ATT_PARAM_SERIALIZE_ALL"])
}
