package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStaticExecutablesAreRecognised(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o600))
	bin := filepath.Join(dir, "static")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.True(t, isStaticELF(bin))
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	require.False(t, isStaticELF(sh))
	require.False(t, isStaticELF(src), "not ELF")
}
