package options

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func resolveEnv(env map[string]string, args ...string) (*Plan, error) {
	cl, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	return Resolve(cl, Sources{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
}

// The PC-sampling options are rocprofv3's, with its rules, from the command
// line, ROCPROF_* variables and -i files alike.
func TestPCSamplingOptions(t *testing.T) {
	p := resolve(t, "--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time",
		"--pc-sampling-interval", "10", "--", "app")
	require.True(t, p.Passes[0].PCSampling())
	require.Equal(t, 10, p.Passes[0].PcSamplingInterval)

	p, err := resolveEnv(map[string]string{"ROCPROFILER_PC_SAMPLING_BETA_ENABLED": "1", "ROCPROF_PC_SAMPLING_METHOD": "stochastic",
		"ROCPROF_PC_SAMPLING_UNIT": "cycles", "ROCPROF_PC_SAMPLING_INTERVAL": "1024"}, "--", "app")
	require.NoError(t, err)
	require.Equal(t, "stochastic", p.Passes[0].PcSamplingMethod)

	dir := t.TempDir()
	yml := filepath.Join(dir, "in.yaml")
	require.NoError(t, os.WriteFile(yml, []byte("jobs:\n  - pc_sampling_beta_enabled: true\n    pc_sampling_method: host_trap\n    pc_sampling_unit: time\n    pc_sampling_interval: 5\n"), 0o644))
	p = resolve(t, "-i", yml, "--", "app")
	require.Equal(t, "host_trap", p.Passes[0].PcSamplingMethod)
	js := filepath.Join(dir, "in.json")
	require.NoError(t, os.WriteFile(js, []byte(`{"jobs":[{"pc_sampling_beta_enabled":true,"pc_sampling_method":"stochastic","pc_sampling_unit":"cycles","pc_sampling_interval":256}]}`), 0o644))
	p = resolve(t, "-i", js, "--", "app")
	require.Equal(t, 256, p.Passes[0].PcSamplingInterval)

	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time", "--pc-sampling-interval", "10"}, nil, "PC sampling is a beta feature"},
		{[]string{"--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-interval", "10"}, nil, "must be given together"},
		{[]string{"--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time", "--pc-sampling-interval", "0"}, nil, "must be given together"},
		{[]string{"--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-unit", "cycles", "--pc-sampling-interval", "10"}, nil, "host_trap sampling has no interval in cycles on any GPU: use --pc-sampling-unit time"},
		{[]string{"--pc-sampling-beta-enabled", "--pc-sampling-method", "stochastic", "--pc-sampling-unit", "instructions", "--pc-sampling-interval", "10"}, nil, "use --pc-sampling-unit cycles"},
		{[]string{"--pc-sampling-beta-enabled", "--pc-sampling-method", "random", "--pc-sampling-unit", "time", "--pc-sampling-interval", "10"}, nil, "random"},
		{nil, map[string]string{"ROCPROF_PC_SAMPLING_METHOD": "host_trap", "ROCPROF_PC_SAMPLING_UNIT": "time", "ROCPROF_PC_SAMPLING_INTERVAL": "3"}, "PC sampling is a beta feature"},
	} {
		_, err := resolveEnv(c.env, append(c.args, "--", "app")...)
		require.ErrorContains(t, err, c.want, c.args)
	}
}

// A request is checked against one GPU's configurations.
func TestCheckPCSamplingOn(t *testing.T) {
	c := &Config{PcSamplingMethod: "stochastic", PcSamplingUnit: "cycles", PcSamplingInterval: 1 << 20}
	require.NoError(t, c.CheckPCSamplingOn("gfx942:sramecc+:xnack-", "GPU 0"))
	require.ErrorContains(t, c.CheckPCSamplingOn("gfx90a", "GPU 0"), "offers no stochastic sampling in cycles; it offers host_trap/time")
	require.ErrorContains(t, c.CheckPCSamplingOn("gfx1030", "GPU 1"), "GPU 1 (gfx1030) has no PC sampling")
	c.PcSamplingInterval = 128
	require.ErrorContains(t, c.CheckPCSamplingOn("gfx942", "GPU 0"), "outside GPU 0's range for stochastic sampling in cycles: 256 to 2147483648")
	c.PcSamplingInterval = 3000
	require.ErrorContains(t, c.CheckPCSamplingOn("gfx942", "GPU 0"), "must be a power of two for stochastic sampling on GPU 0 (e.g. 2048)")
}
