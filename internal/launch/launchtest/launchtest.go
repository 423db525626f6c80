// Package launchtest gives tests do-nothing stand-ins for the libraries the
// launcher injects, so the launcher's and the CLI's mechanics can be tested
// without building the real ones.
package launchtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Library names, as internal/launch expects them.
var names = []string{"librocprof-go-preload.so", "librocprof-go-shim.so", "librocprof-go-vgpu.so"}

// FakeLibDir builds empty shared libraries with the injected libraries'
// names into a temporary directory and returns it (for ROCPROF_GO_LIBDIR).
func FakeLibDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "empty.c")
	if err := os.WriteFile(src, []byte("int rpg_fake_symbol;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if out, err := exec.Command("cc", "-shared", "-fPIC", "-o", filepath.Join(dir, name), src).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, out)
		}
	}
	return dir
}
