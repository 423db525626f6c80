package main

import (
	"bufio"
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// An agent's records: the agent, its PC-sampling configurations in
// rocprofiler-sdk's numbers (method stochastic 1, host_trap 2; unit
// instructions 1, cycles 2, time 3; flags 1 = interval pow2), then its
// counters, each followed by its dimensions; tabs, newlines and
// backslashes in fields escaped.
func TestAvailRecords(t *testing.T) {
	db, err := counters.ForAgent("gfx942")
	require.NoError(t, err)
	ag := topology.Agent{Index: 0, NodeID: 4, Arch: "gfx942"}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	require.NoError(t, writeAvailRecords(w, ag, db, options.PCSamplingConfigs("gfx942")))
	require.NoError(t, w.Flush())
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.True(t, strings.HasPrefix(lines[0], "agent\t4\t{"), lines[0])
	require.Equal(t, []string{
		"pcs\t4\t2\t3\t1\t18446744073709551615\t0",
		"pcs\t4\t1\t2\t256\t2147483648\t1",
	}, lines[1:3])
	require.True(t, strings.HasPrefix(lines[3], "counter\t4\t"), lines[3])
	kinds := map[string]int{}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		kinds[f[0]]++
		switch f[0] {
		case "counter":
			require.Len(t, f, 8, l)
		case "dim":
			require.Len(t, f, 4, l)
		case "pcs":
			require.Len(t, f, 7, l)
		}
	}
	require.Equal(t, 1, kinds["agent"])
	require.Equal(t, 2, kinds["pcs"])
	require.Equal(t, len(db.Available()), kinds["counter"])

	// The table's gfx90a host trap, and a runtime's instruction-unit one.
	b.Reset()
	w.Reset(&b)
	require.NoError(t, writeAvailRecords(w, ag, db, []options.PCSamplingConfig{
		{Method: "host_trap", Unit: "time", Min: 1, Max: math.MaxUint64},
		{Method: "stochastic", Unit: "instructions", Min: 16, Max: 1 << 20, Pow2: true},
	}))
	require.NoError(t, w.Flush())
	require.Contains(t, b.String(), "\npcs\t4\t2\t3\t1\t18446744073709551615\t0\npcs\t4\t1\t1\t16\t1048576\t1\ncounter\t")

	// No configurations: no pcs record.
	b.Reset()
	w.Reset(&b)
	require.NoError(t, writeAvailRecords(w, ag, db, nil))
	require.NoError(t, w.Flush())
	require.NotContains(t, b.String(), "\npcs\t")

	// A method or unit rocprofiler-sdk has no number for is an error, not a 0.
	w.Reset(&b)
	require.Error(t, writeAvailRecords(w, ag, db, []options.PCSamplingConfig{{Method: "trace", Unit: "time", Min: 1, Max: 2}}))

	require.Equal(t, `a\tb\nc\\d`, escapeRecordField("a\tb\nc\\d"))
}

// Named architectures (--arch) have no runtime to ask: their records carry
// no PC-sampling configuration.
func TestAvailRecordsNamedArchs(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeAvailFormat(&b, "records", []string{"gfx942", "gfx90a"}, "", func(string) (string, bool) { return "", false }, "", ""))
	require.True(t, strings.HasPrefix(b.String(), availRecordsHeader+"\nagent\t1\t"), b.String()[:80])
	require.Contains(t, b.String(), "\nagent\t2\t")
	require.NotContains(t, b.String(), "\npcs\t")
}
