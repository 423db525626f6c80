package textdist

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"kernel-trac", "kernel-trace", 1}, {"SQ_WAVE", "SQ_WAVES", 1}, {"abc", "", 3}, {"kitten", "sitting", 3}} {
		require.Equal(t, tc.want, Levenshtein(tc.a, tc.b), "%s/%s", tc.a, tc.b)
	}
}
