package launch

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// KeepSpoolsEnv names a directory where every pass's spools are copied
// once its outputs are written (DIR/pass_N/rpg-*.spool): the raw records,
// for tests and for writers of formats the outputs do not have yet (read
// them with internal/tracing). The run directory itself is still removed.
const KeepSpoolsEnv = "ROCPROF_GO_KEEP_SPOOLS"

// keepSpools copies the spools of pass (1-based) from spoolDir into
// dst/pass_N, creating it. Copies, not links: spools live on /dev/shm,
// dst usually elsewhere.
func keepSpools(dst, spoolDir string, pass int) error {
	paths, err := tracing.List(spoolDir)
	if err != nil {
		return err
	}
	to := filepath.Join(dst, fmt.Sprintf("pass_%d", pass))
	if err := os.MkdirAll(to, 0o700); err != nil {
		return fmt.Errorf("%s=%s: %w (set it to a writable directory)", KeepSpoolsEnv, dst, err)
	}
	for _, p := range paths {
		if err := copyFile(p, filepath.Join(to, filepath.Base(p))); err != nil {
			return fmt.Errorf("%s=%s: %w", KeepSpoolsEnv, dst, err)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
