package tracing_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

var update = flag.Bool("update", false, "rewrite golden files and fuzz seeds")

// seedSpools are the fuzz seeds kept in testdata/spool; the test keeps them
// equal to what the builder makes, so the seeds follow format changes.
func seedSpools() map[string][]byte {
	all := spooltest.New(testProcess)
	for _, rec := range oneOfEach {
		all.Add(rec)
	}
	torn := spooltest.New(testProcess)
	api := tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, CorrelationID: 1}
	torn.Add(api)
	torn.AddTorn(api)
	torn.Add(api)
	return map[string][]byte{"one-of-each.spool": all.Bytes(), "torn.spool": torn.Bytes()}
}

func TestFuzzSeedsCurrent(t *testing.T) {
	for name, want := range seedSpools() {
		path := filepath.Join("../../testdata/spool", name)
		if *update {
			require.NoError(t, os.WriteFile(path, want, 0o644))
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./internal/tracing -run FuzzSeeds -update")
		require.Equal(t, want, got, "%s is stale: rerun with -update", name)
	}
}
