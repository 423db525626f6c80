package options

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// -f's choices and help are the one list of formats, and a name not in it
// is refused.
func TestOutputFormatChoicesAreTheFormatList(t *testing.T) {
	var found bool
	for _, s := range Specs {
		if s.Long != "output-format" {
			continue
		}
		found = true
		require.Equal(t, format.Names(), s.Choices)
		require.Contains(t, s.Help, strings.Join(format.Names(), " "))
	}
	require.True(t, found)
	cl, err := ParseArgs([]string{"-f", "sqlite", "--", "true"})
	if err == nil {
		_, err = Resolve(cl, Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	}
	require.ErrorContains(t, err, `"sqlite"`)
}
