package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Names and messages cut to fit a record are counted in run.json and said
// at the end of the run (issue 31).
func TestTruncatedNamesInManifestAndNote(t *testing.T) {
	m := &Manifest{TruncatedNames: []TruncatedNames{{PID: 42, Count: 7}}}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.Contains(t, string(b), `"truncated_names":[{"pid":42,"count":7}]`)
	var w strings.Builder
	noteTruncated(&w, m.TruncatedNames)
	require.Equal(t, "rocprof-go: note: pid 42: 7 names or messages were longer than the largest record (~64 KiB) and were cut (run.json truncated_names)\n", w.String())
}
