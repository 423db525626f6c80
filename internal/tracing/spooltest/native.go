package spooltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The preload library and the spool driver (testdata/spool/driver.c) are
// compiled from the sources with gcc, so tests need nothing from `make`.
var (
	nativeOnce sync.Once
	nativeDir  string
	nativeErr  error
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// recorderSources are the preload library's files that make the recorder.
var recorderSources = []string{"clock.c", "recorder.c", "notes.c", "env.c"}

// BuildNative returns the paths of the spool driver and of the preload
// library, building them once per test binary. Call CleanupNative from
// TestMain to remove them.
func BuildNative(tb testing.TB) (driver, preload string) {
	tb.Helper()
	nativeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rpg-native-")
		if err != nil {
			nativeErr = err
			return
		}
		nativeDir = dir
		root := repoRoot()
		// Only the recorder's sources: the HIP/ROCTx interposers that share
		// the library are tested by their own packages (and take seconds to
		// compile).
		var srcs []string
		for _, f := range recorderSources {
			srcs = append(srcs, filepath.Join(root, "internal/hsa/preload", f))
		}
		lib := filepath.Join(dir, "librocprof-go-preload.so")
		args := append([]string{"-O2", "-std=gnu11", "-Wall", "-Werror", "-fPIC", "-shared",
			"-fvisibility=hidden", "-fno-semantic-interposition", "-pthread", "-o", lib}, srcs...)
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			nativeErr = fmt.Errorf("build preload library: %w: %s", err, out)
			return
		}
		drv := filepath.Join(dir, "spool-driver")
		out, err := exec.Command("gcc", "-O2", "-std=gnu11", "-pthread",
			"-I"+filepath.Join(root, "internal/hsa/preload"), "-o", drv,
			filepath.Join(root, "testdata/spool/driver.c"), lib, "-Wl,-rpath,"+dir).CombinedOutput()
		if err != nil {
			nativeErr = fmt.Errorf("build spool driver: %w: %s", err, out)
		}
	})
	if nativeErr != nil {
		tb.Fatal(nativeErr)
	}
	return filepath.Join(nativeDir, "spool-driver"), filepath.Join(nativeDir, "librocprof-go-preload.so")
}

// CleanupNative removes what BuildNative built.
func CleanupNative() {
	if nativeDir != "" {
		_ = os.RemoveAll(nativeDir)
	}
}

// DriverCommand returns the driver run with a spool directory and HIP
// runtime tracing on.
func DriverCommand(tb testing.TB, spoolDir string, args ...string) *exec.Cmd {
	driver, _ := BuildNative(tb)
	cmd := exec.Command(driver, args...)
	cmd.Env = append(os.Environ(), "ROCPROF_GO_SPOOL_DIR="+spoolDir, "ROCPROF_HIP_RUNTIME_API_TRACE=1")
	return cmd
}
