package output

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// A synthetic run: several processes, every domain, known counts.

// writeFormats writes the spools in formats through Write, as one set of
// files at prefix.
func writeFormats(t *testing.T, formats []model.Format, prefix string, spools []string) {
	t.Helper()
	_, err := Write(model.Config{Dir: filepath.Dir(prefix), PrefixTemplate: filepath.Base(prefix), SpoolPaths: spools,
		Formats: formats}, "")
	require.NoError(t, err)
}
