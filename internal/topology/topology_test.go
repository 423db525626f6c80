package topology

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArchFromTargetVersion(t *testing.T) {
	for v, want := range map[uint64]string{90010: "gfx90a", 90008: "gfx908", 90000: "gfx900", 90402: "gfx942", 100300: "gfx1030", 110000: "gfx1100"} {
		require.Equal(t, want, ArchFromTargetVersion(v))
	}
}

func TestDetectFromSysfs(t *testing.T) {
	root := t.TempDir()
	write := func(node, props string) {
		d := filepath.Join(root, node)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "properties"), []byte(props), 0o644))
	}
	write("0", "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n")
	write("2", "cpu_cores_count 0\nsimd_count 416\ngfx_target_version 90010\n")
	write("1", "cpu_cores_count 0\nsimd_count 480\ngfx_target_version 90008\n")
	agents, err := Detect("", os.LookupEnv, root)
	require.NoError(t, err)
	require.Len(t, agents, 2)
	require.Equal(t, Agent{Index: 0, NodeID: 1, Arch: "gfx908", Properties: agents[0].Properties}, agents[0])
	require.Equal(t, "gfx90a", agents[1].Arch)
	require.EqualValues(t, 416, agents[1].Properties["simd_count"])

	_, err = Detect("", os.LookupEnv, filepath.Join(root, "none"))
	require.ErrorIs(t, err, ErrNoGPU)
}

func TestDetectVirtual(t *testing.T) {
	env := map[string]string{VirtualCountEnv: "4"}
	agents, err := Detect("gfx908", func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "")
	require.NoError(t, err)
	require.Len(t, agents, 4)
	require.Equal(t, "gfx908", agents[3].Arch)
	env[VirtualCountEnv] = "9"
	_, err = Detect("gfx908", func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "")
	require.Error(t, err)
}
