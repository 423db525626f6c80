package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func builtApp(t *testing.T, name string) string {
	dir := os.Getenv("ROCPROF_GO_BUILD")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "build")
	}
	p := filepath.Join(dir, "testdata", name)
	require.FileExists(t, p, "run `make test` (it builds the sample apps)")
	return p
}

// --virtual-gpu checks, before the app runs, that the app can receive the
// virtual GPU and that its ROCm runtime knows the emulated architecture.
func TestCheckVirtualGPU(t *testing.T) {
	hip := builtApp(t, "devices") // linked against the host's ROCm 5.2.3
	env := os.Environ()

	require.NoError(t, CheckVirtualGPU([]string{hip}, "gfx90a", env))
	require.NoError(t, CheckVirtualGPU([]string{hip}, "gfx1030", env))

	err := CheckVirtualGPU([]string{hip}, "gfx942", env)
	require.ErrorContains(t, err, "does not know gfx942")
	require.ErrorContains(t, err, "gfx90a, gfx908, gfx906, gfx900, gfx1030", "names the architectures it knows")
	require.ErrorContains(t, err, "ROCm 6.1 or later")
	require.ErrorContains(t, CheckVirtualGPU([]string{hip}, "gfx1100", env), "does not know gfx1100")

	// A program that loads ROCm itself later (dlopen) is judged by the
	// system's default runtime.
	require.ErrorContains(t, CheckVirtualGPU([]string{"true"}, "gfx942", env), "does not know gfx942")

	dir := t.TempDir()
	src := filepath.Join(dir, "s.c")
	require.NoError(t, os.WriteFile(src, []byte("int main(void){return 0;}\n"), 0o600))
	static := filepath.Join(dir, "static")
	out, err := exec.Command("cc", "-static", "-o", static, src).CombinedOutput()
	require.NoError(t, err, string(out))
	require.ErrorContains(t, CheckVirtualGPU([]string{static}, "gfx90a", env), "statically linked")

	script := filepath.Join(dir, "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o700))
	require.NoError(t, CheckVirtualGPU([]string{script}, "gfx942", env), "a script is not judged")
	require.NoError(t, CheckVirtualGPU([]string{hip}, "", env), "no virtual GPU, no check")
}
