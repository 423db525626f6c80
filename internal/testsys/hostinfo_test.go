package testsys

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const intelVM = `processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model name	: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags		: fpu tsc constant_tsc rep_good nopl nonstop_tsc cpuid hypervisor lahf_lm

processor	: 1
vendor_id	: GenuineIntel
model name	: Some Other CPU
flags		: fpu
`

const amdMetal = `processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC 7763 64-Core Processor
flags		: fpu tsc constant_tsc nonstop_tsc cpuid
`

func TestParseHost(t *testing.T) {
	h := ParseHost(intelVM, "kvm-clock\n")
	require.Equal(t, Host{Model: "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", Vendor: "Intel",
		Hypervisor: true, InvariantTSC: true, ClockSource: "kvm-clock"}, h, "the first processor's fields")
	require.Equal(t, "host: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz (Intel, hypervisor), clocksource kvm-clock; "+
		"per read: rdtsc not measured, clock_gettime(CLOCK_BOOTTIME) not measured", h.String())

	h = ParseHost(amdMetal, "tsc")
	h.RDTSCNs, h.ClockGettimeNs = 9.84, 24.1
	require.Equal(t, "host: AMD EPYC 7763 64-Core Processor (AMD, bare metal), clocksource tsc; "+
		"per read: rdtsc 9.8 ns, clock_gettime(CLOCK_BOOTTIME) 24.1 ns", h.String())

	// Another vendor, no invariant TSC, no model name (arm64's cpuinfo has
	// none), no clock source file.
	h = ParseHost("processor\t: 0\nvendor_id\t: HygonGenuine\nflags\t\t: fpu tsc\n", "")
	require.Equal(t, Host{Model: "unknown", Vendor: "HygonGenuine", ClockSource: "unknown"}, h)
	require.Contains(t, h.String(), "TSC not invariant (the recorder stamps with clock_gettime)")
	require.Equal(t, Host{Model: "unknown", Vendor: "unknown", ClockSource: "unknown"}, ParseHost("", ""))
}

func TestReadHostOnThisMachine(t *testing.T) {
	h := ReadHost()
	t.Log(h)
	require.NotEmpty(t, h.Model)
	if runtime.GOARCH == "amd64" {
		require.NotEqual(t, "unknown", h.Model, "x86 Linux names its CPU in /proc/cpuinfo")
		require.NotEqual(t, "unknown", h.Vendor)
	}
	require.NotEqual(t, "unknown", h.ClockSource, "Linux names its clock source in sysfs")
	require.NotContains(t, h.ClockSource, "\n")
	require.True(t, strings.HasPrefix(h.String(), "host: "+h.Model+" ("))
	if !clockReadsMeasured {
		require.Zero(t, h.RDTSCNs)
		require.Zero(t, h.ClockGettimeNs)
		return
	}
	if runtime.GOARCH == "amd64" {
		require.Positive(t, h.RDTSCNs)
		require.Less(t, h.RDTSCNs, 10000.0, "ns per rdtsc")
	}
	require.Positive(t, h.ClockGettimeNs)
	require.Less(t, h.ClockGettimeNs, 100000.0, "ns per clock_gettime")
}
