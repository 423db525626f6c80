package options

import (
	"math"
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
	require.EqualValues(t, 10, p.Passes[0].PcSamplingInterval)

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
	require.EqualValues(t, 256, p.Passes[0].PcSamplingInterval)

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

// The largest interval each configuration documents is accepted, one more
// is refused (issue 41: host trap's 18446744073709551615 µs, 2^64-1, as
// docs/pc-sampling.md and rocprofv3-avail list it, failed as "invalid
// integer"): from the command line, a ROCPROF_* variable, YAML and JSON
// jobs; the injected shim gets it unchanged.
func TestPCSamplingIntervalMaximum(t *testing.T) {
	const hostTrapMax = "18446744073709551615"
	hostTrap := func(iv string) []string {
		return []string{"--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time",
			"--pc-sampling-interval", iv, "--", "app"}
	}
	p := resolve(t, hostTrap(hostTrapMax)...)
	c := p.Passes[0]
	require.Equal(t, uint64(math.MaxUint64), c.PcSamplingInterval)
	require.NoError(t, c.CheckPCSamplingOn("gfx90a", "GPU 0"))
	require.NoError(t, c.CheckPCSamplingOn("gfx942", "GPU 0"))
	require.Equal(t, hostTrapMax, c.ToolEnv(t.TempDir())["ROCPROF_PC_SAMPLING_INTERVAL"])
	_, err := resolveEnv(nil, hostTrap("18446744073709551616")...)
	require.ErrorContains(t, err, `invalid integer "18446744073709551616" (a whole number from 0 to 18446744073709551615)`)

	p, err = resolveEnv(map[string]string{"ROCPROFILER_PC_SAMPLING_BETA_ENABLED": "1", "ROCPROF_PC_SAMPLING_METHOD": "host_trap",
		"ROCPROF_PC_SAMPLING_UNIT": "time", "ROCPROF_PC_SAMPLING_INTERVAL": hostTrapMax}, "--", "app")
	require.NoError(t, err)
	require.Equal(t, uint64(math.MaxUint64), p.Passes[0].PcSamplingInterval)
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"in.yaml": "jobs:\n  - pc_sampling_beta_enabled: true\n    pc_sampling_method: host_trap\n    pc_sampling_unit: time\n    pc_sampling_interval: " + hostTrapMax + "\n",
		"in.json": `{"jobs":[{"pc_sampling_beta_enabled":true,"pc_sampling_method":"host_trap","pc_sampling_unit":"time","pc_sampling_interval":` + hostTrapMax + `}]}`,
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		p = resolve(t, "-i", path, "--", "app")
		require.Equal(t, uint64(math.MaxUint64), p.Passes[0].PcSamplingInterval, name)
	}

	// Stochastic on gfx942: 2^31 cycles is the largest, 2^32 (the next
	// power of two) is outside.
	st := &Config{PcSamplingMethod: "stochastic", PcSamplingUnit: "cycles", PcSamplingInterval: 1 << 31}
	require.NoError(t, st.CheckPCSamplingOn("gfx942", "GPU 0"))
	st.PcSamplingInterval = 1<<31 + 1
	require.ErrorContains(t, st.CheckPCSamplingOn("gfx942", "GPU 0"), "outside GPU 0's range for stochastic sampling in cycles: 256 to 2147483648")
	st.PcSamplingInterval = 1 << 32
	require.ErrorContains(t, st.CheckPCSamplingOn("gfx942", "GPU 0"), "outside GPU 0's range")
	// A negative interval is no interval.
	_, err = resolveEnv(nil, hostTrap("-1")...)
	require.ErrorContains(t, err, `invalid integer "-1"`)
}
