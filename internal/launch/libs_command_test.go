package launch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A program using pkg/rocprof outside the repository embeds no libraries:
// it asks the rocprof-go command on PATH (`rocprof-go libdir`), and says
// what to do when there is none.
func TestLibrariesFromTheCommandOnPath(t *testing.T) {
	libs := t.TempDir()
	for _, n := range []string{PreloadLib, ShimLib, VGPULib} {
		require.NoError(t, os.WriteFile(filepath.Join(libs, n), []byte("lib"), 0o755))
	}
	bin := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = " + LibDirCommand + " ] && echo " + libs + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "rocprof-go"), []byte(script), 0o755))
	t.Setenv("PATH", bin)
	l, err := librariesOfCommand()
	require.NoError(t, err)
	require.Equal(t, libs, l.Dir)

	require.NoError(t, os.Remove(filepath.Join(libs, ShimLib)))
	_, err = librariesOfCommand()
	require.ErrorContains(t, err, "does not hold "+ShimLib)

	t.Setenv("PATH", t.TempDir())
	_, err = librariesOfCommand()
	require.ErrorContains(t, err, "no rocprof-go command is on PATH")
	require.ErrorContains(t, err, LibDirEnv)
}
