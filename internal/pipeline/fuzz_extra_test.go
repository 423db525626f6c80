package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzLoadBatch feeds batch files (`rocprof-go batch jobs.yaml`) to the
// loader: bad input is an error, never a panic, and a batch that loads has
// jobs with valid, distinct names and a command each.
func FuzzLoadBatch(f *testing.F) {
	for _, s := range []string{
		"batch:\n  - name: small\n    command: [./app, \"1024\"]\n    options: [--kernel-trace]\n    timeout: 60s\n",
		"batch:\n  - command: [./app]\n    expect_exit: 134\n    env: {A: b}\n",
		"batch: []\n", "batch:\n  - name: a\n  - name: a\n", "jobs: 1\n", "batch:\n  - command: [x]\n    timeout: 5x\n", "{{",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "jobs.yaml")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		b, err := LoadBatch(path)
		if err != nil {
			return
		}
		require.NotEmpty(t, b.Jobs)
		seen := map[string]bool{}
		for _, j := range b.Jobs {
			require.Regexp(t, `^[A-Za-z0-9][A-Za-z0-9._-]*$`, j.Name)
			require.False(t, seen[j.Name])
			seen[j.Name] = true
			require.NotEmpty(t, j.Command)
		}
	})
}
