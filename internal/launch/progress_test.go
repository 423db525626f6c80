package launch

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlainPassLinesAwayFromATerminal(t *testing.T) {
	var b bytes.Buffer
	p := newPassProgress(&b, 3)
	p.begin(1, "pmc_1: pmc SQ_WAVES")
	p.done()
	p.begin(2, "pmc_2: pmc GRBM_COUNT")
	require.Contains(t, b.String(), "rocprof-go: pass 1 of 3 (pmc_1: pmc SQ_WAVES), 0s elapsed\n")
	require.Contains(t, b.String(), "rocprof-go: pass 2 of 3 (pmc_2: pmc GRBM_COUNT), 0s elapsed, about 0s left\n")
	var single bytes.Buffer
	newPassProgress(&single, 1).begin(1, "")
	require.Empty(t, single.String(), "a single run prints no pass line")
}
