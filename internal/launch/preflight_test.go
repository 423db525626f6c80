package launch

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

// The offload bundles of real HIP programs name their architectures.
func TestFatbinTargetsOfBuiltApps(t *testing.T) {
	got, err := fatbinTargets(builtApp(t, "multistream"))
	require.NoError(t, err)
	require.Equal(t, []string{"gfx90a"}, got)
	got, err = fatbinTargets(builtApp(t, "gfx1030/memcheck"))
	require.NoError(t, err)
	require.Equal(t, []string{"gfx1030"}, got)
	// A program without GPU code of its own: nothing to tell.
	got, err = fatbinTargets("/bin/true")
	require.NoError(t, err)
	require.Empty(t, got)
}

// bundle builds an uncompressed clang offload bundle with these entry ids.
func bundle(ids ...string) []byte {
	var b bytes.Buffer
	b.Write(bundleMagic)
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(ids)))
	for _, id := range ids {
		_ = binary.Write(&b, binary.LittleEndian, [3]uint64{4096, 0, uint64(len(id))})
		b.WriteString(id)
	}
	return b.Bytes()
}

func TestBundleIDs(t *testing.T) {
	ids, err := bundleIDs(bundle("host-x86_64-unknown-linux", "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx10-3-generic"))
	require.NoError(t, err)
	var archs []string
	for _, id := range ids {
		if a := targetArch(id); a != "" {
			archs = append(archs, a)
		}
	}
	require.Equal(t, []string{"gfx90a", "gfx10-3-generic"}, archs)
	require.True(t, targetRuns("gfx10-3-generic", "gfx1030"))
	require.False(t, targetRuns("gfx9-generic", "gfx90a"), "gfx90a is not part of gfx9-generic")
	_, err = bundleIDs(bundle("x")[:len(bundleMagic)+12])
	require.ErrorContains(t, err, "malformed offload bundle")
}

// A gfx90a-only program under --virtual-gpu=gfx1030 gets a warning naming
// what it has and what to type; a matching one gets none.
func TestCodeObjectWarning(t *testing.T) {
	app := builtApp(t, "multistream")
	w := CodeObjectWarning([]string{app}, "gfx1030", "", os.Environ())
	require.Equal(t, "--virtual-gpu=gfx1030: "+app+" holds GPU code for gfx90a only, so HIP will find no kernel for gfx1030 (hipErrorNoBinaryForGpu): "+
		"run it with --virtual-gpu=gfx90a, or rebuild it for gfx1030 (hipcc --offload-arch=gfx1030)", w)
	require.Empty(t, CodeObjectWarning([]string{app}, "gfx90a", "", os.Environ()))
	require.Empty(t, CodeObjectWarning([]string{app}, "", "", os.Environ()), "no virtual GPU: not judged")
	require.Empty(t, CodeObjectWarning([]string{builtApp(t, "gfx1030/memcheck")}, "gfx1030", "", os.Environ()))
	require.Empty(t, CodeObjectWarning([]string{"sh", "-c", "true"}, "gfx1030", "", os.Environ()), "a shell has no GPU code")
}

func TestNoGPUWarning(t *testing.T) {
	cfg := &options.Config{}
	old := kfdPath
	t.Cleanup(func() { kfdPath = old })
	kfdPath = filepath.Join(t.TempDir(), "kfd")
	require.Contains(t, NoGPUWarning([]string{"true"}, cfg, "", os.Environ()), "add --virtual-gpu to run it on rocprof-go's virtual GPU")
	require.Empty(t, NoGPUWarning([]string{"no-such-program-here"}, cfg, "", os.Environ()), "the launcher reports a missing app")
	require.Empty(t, NoGPUWarning([]string{"true"}, &options.Config{VirtualGPU: "gfx90a"}, "", os.Environ()))
	require.NoError(t, exec.Command("touch", kfdPath).Run())
	require.Empty(t, NoGPUWarning([]string{"true"}, cfg, "", os.Environ()), "a GPU driver is there")
}
