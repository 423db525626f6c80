package launch

import (
	"fmt"
	"os"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// writeCounterFiles copies a pass's counter definitions files
// ($ROCPROFILER_METRICS_PATH/counter_defs.yaml, -E's file) into its private
// directory, where the shim reads them (composeEnv names them): the app sees
// the definitions the run was checked with, whatever happens to the
// originals (rocprofiler-compute deletes its directory after each pass), and
// their size is not bounded by what one environment variable holds.
func writeCounterFiles(pass *securedir.Dir, cfg *options.Config) error {
	for _, f := range cfg.CounterFiles() {
		data, err := os.ReadFile(f.Source)
		if err != nil {
			return fmt.Errorf("counter definitions: %w", err)
		}
		if err := pass.WriteFile(f.Name, data, 0o600); err != nil {
			return fmt.Errorf("counter definitions: copying %s into the run's directory: %w", f.Source, err)
		}
	}
	return nil
}
