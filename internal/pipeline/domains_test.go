package pipeline

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// A pass that collects counters through an input file's pmc_groups is
// checked for lost counters as a --pmc pass is: a runtime that dropped the
// shim, or one that cannot collect counters, loses them (issue 35).
func TestDomainLossesCountPmcGroups(t *testing.T) {
	for name, c := range map[string]*options.Config{
		"pmc":        {Pmc: []string{"SQ_WAVES"}},
		"pmc_groups": {PmcGroups: [][]string{{"SQ_WAVES"}, {"GRBM_COUNT"}}},
	} {
		t.Run(name, func(t *testing.T) {
			// The HSA runtime initialised without the shim.
			lost, unavailable := domainLosses(c, []output.ProcessStatus{{PID: 20, Status: map[uint64]string{tracing.StatusHSAInit: "pid 20"}}})
			require.Empty(t, unavailable)
			require.Len(t, lost, 1)
			require.Equal(t, []string{"pmc"}, lost[0].Domains)

			// The shim attached but reported counters unavailable: asked
			// for by name, so lost, not a note.
			lost, unavailable = domainLosses(c, []output.ProcessStatus{{PID: 21, Status: map[uint64]string{
				tracing.StatusHSAInit:          "pid 21",
				tracing.StatusShimAttached:     "HSA API tables major 1: core amd",
				tracing.StatusUnavailable | 11: "no counters on this runtime",
			}}})
			require.Empty(t, unavailable)
			require.Equal(t, []DomainLoss{{PID: 21, Domains: []string{"pmc"}, Reason: "no counters on this runtime"}}, lost)
		})
	}
}

// Records the Perfetto trace left out at --perfetto-buffer-size are lost
// records of their process, said with the fix (issue 35).
func TestPerfettoCappedRecordsAreLost(t *testing.T) {
	res := &output.Result{
		Processes: []output.Process{{PID: 30, Records: 10}, {PID: 31, Records: 5}},
		Groups:    []output.Group{{PerfettoCapped: map[int32]uint64{30: 4}}},
	}
	lost, skipped := recordLosses(res)
	require.Empty(t, skipped)
	require.Equal(t, []RecordLoss{{PID: 30, PerfettoCapped: 4}}, lost)
	err := (&RecordsLostError{Records: lost}).Error()
	require.Contains(t, err, "pid 30: 4 left out of the Perfetto trace at its --perfetto-buffer-size")
	require.Contains(t, err, "raise --perfetto-buffer-size, or leave it out")
	require.NotContains(t, err, "file system was full")
}

// A new shim domain is one row of the domain table: a process whose HSA
// runtime did not load the shim lost it, and the shim's report that it is
// unavailable is a loss when it was asked for by name and a note when an
// aggregate implied it.
func TestANewDomainIsCheckedForLoss(t *testing.T) {
	fake := domain.Switch{Option: "fake_trace", Env: "ROCPROF_FAKE_TRACE", ReadBy: domain.Shim, Bit: 13, C: "FAKE", Status: 13,
		CollectedBy: domain.Shim, Outputs: []string{"FAKE"}, Aggregates: []string{"sys_trace"}, Report: "--fake-trace", Empty: ": none"}
	defer options.WithDomain(fake)()
	resolve := func(args ...string) *options.Config {
		cl, err := options.ParseArgs(append(args, "--", "app"))
		require.NoError(t, err)
		plan, err := options.Resolve(cl, options.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
		require.NoError(t, err)
		return plan.Passes[0]
	}
	lost, _ := domainLosses(resolve("--fake-trace", "--kernel-trace"), []output.ProcessStatus{{PID: 20, Status: map[uint64]string{tracing.StatusHSAInit: "pid 20"}}})
	require.Len(t, lost, 1)
	require.Equal(t, []string{"kernel_trace", "fake_trace"}, lost[0].Domains)

	attached := func(pid int) []output.ProcessStatus {
		return []output.ProcessStatus{{PID: pid, Status: map[uint64]string{
			tracing.StatusHSAInit:          "",
			tracing.StatusShimAttached:     "",
			tracing.StatusUnavailable | 13: "no fakes on this runtime",
		}}}
	}
	lost, unavailable := domainLosses(resolve("--fake-trace"), attached(21))
	require.Empty(t, unavailable)
	require.Equal(t, []DomainLoss{{PID: 21, Domains: []string{"fake_trace"}, Reason: "no fakes on this runtime"}}, lost)
	lost, unavailable = domainLosses(resolve("--sys-trace"), attached(22))
	require.Empty(t, lost)
	require.Equal(t, []DomainLoss{{PID: 22, Domains: []string{"fake_trace"}, Reason: "no fakes on this runtime"}}, unavailable)
}

// Attached (--attach PID), a domain a process's agent reports unavailable
// (its HSA runtime was not initialised at the attach: a launcher of GPU
// workers) is a notice, not a loss, even asked for by name.
func TestAttachedUnavailableDomainIsANotice(t *testing.T) {
	resolve := func(args ...string) *options.Config {
		cl, err := options.ParseArgs(args)
		require.NoError(t, err)
		p, err := options.Resolve(cl, options.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
		require.NoError(t, err)
		return p.Passes[0]
	}
	c := resolve("-p", "42", "--kernel-trace")
	st := []output.ProcessStatus{{PID: 42, Status: map[uint64]string{
		tracing.StatusUnavailable | 7: "the app had not initialised the HSA runtime when attached; attach again once it runs GPU work",
	}}}
	lost, unavailable := domainLosses(c, st)
	require.Empty(t, lost)
	require.Equal(t, []DomainLoss{{PID: 42, Domains: []string{"kernel_trace"}, Reason: "the app had not initialised the HSA runtime when attached; attach again once it runs GPU work"}}, unavailable)
	lost, _ = domainLosses(resolve("--kernel-trace", "--", "app"), st)
	require.Len(t, lost, 1, "launched, asked by name: lost")
}
