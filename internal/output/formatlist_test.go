package output

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// The registry has one writer for each format of the one list, in its
// order, and nothing else: a format added to the list without a writer (or
// a writer without its name in the list, which -f would refuse) fails here.
func TestRegistryFollowsTheFormatList(t *testing.T) {
	var got []string
	for _, w := range Writers {
		got = append(got, string(w.Format))
	}
	require.Equal(t, format.Names(), got)
}
