package testsys

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Host is the machine a benchmark measured on: what `make bench` prints
// beside every overhead ratio (and once at the top of build/bench.txt), so
// that a figure is never read without the CPU and the clocks behind it.
type Host struct {
	Model        string // /proc/cpuinfo "model name"; "unknown" without one
	Vendor       string // "Intel", "AMD", another CPU's vendor_id, or "unknown"
	Hypervisor   bool   // the cpuinfo flag "hypervisor": a virtual machine
	InvariantTSC bool   // constant_tsc and nonstop_tsc: the recorder stamps with rdtsc
	ClockSource  string // the kernel's current clock source; "unknown" unreadable
	// The cost of one read of each clock the recorder uses on the app's
	// thread (internal/hsa/preload: __rdtsc() for its stamps,
	// clock_gettime(CLOCK_BOOTTIME) until the TSC is calibrated or without
	// an invariant TSC), back to back, ns; 0 when not measured (no cgo, or
	// no rdtsc on this architecture).
	RDTSCNs, ClockGettimeNs float64
}

const (
	cpuinfoPath     = "/proc/cpuinfo"
	clockSourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
)

// ParseHost describes a host from the contents of /proc/cpuinfo (its first
// processor) and of the clock source file; the clock costs stay 0.
func ParseHost(cpuinfo, clockSource string) Host {
	h := Host{Model: "unknown", Vendor: "unknown", ClockSource: strings.TrimSpace(clockSource)}
	if h.ClockSource == "" {
		h.ClockSource = "unknown"
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(cpuinfo, "\n") {
		key, val, ok := strings.Cut(line, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || val == "" || seen[key] {
			continue
		}
		seen[key] = true
		switch key {
		case "model name":
			h.Model = val
		case "vendor_id":
			switch val {
			case "GenuineIntel":
				h.Vendor = "Intel"
			case "AuthenticAMD":
				h.Vendor = "AMD"
			default:
				h.Vendor = val
			}
		case "flags":
			fl := strings.Fields(val)
			h.Hypervisor = slices.Contains(fl, "hypervisor")
			h.InvariantTSC = slices.Contains(fl, "constant_tsc") && slices.Contains(fl, "nonstop_tsc")
		}
	}
	return h
}

// ReadHost describes this machine: /proc/cpuinfo, the clock source, and the
// clock reads measured now (MeasureClockReads).
func ReadHost() Host {
	cpuinfo, _ := os.ReadFile(cpuinfoPath)
	cs, _ := os.ReadFile(clockSourcePath)
	h := ParseHost(string(cpuinfo), string(cs))
	h.RDTSCNs, h.ClockGettimeNs = MeasureClockReads()
	return h
}

// String is the host line: "host: <model> (<vendor>, hypervisor|bare
// metal), clocksource <source>; ..." with the clock reads' costs.
func (h Host) String() string {
	where := "bare metal"
	if h.Hypervisor {
		where = "hypervisor"
	}
	s := fmt.Sprintf("host: %s (%s, %s), clocksource %s", h.Model, h.Vendor, where, h.ClockSource)
	if !h.InvariantTSC {
		s += ", TSC not invariant (the recorder stamps with clock_gettime)"
	}
	read := func(ns float64) string {
		if ns <= 0 {
			return "not measured"
		}
		return fmt.Sprintf("%.1f ns", ns)
	}
	return s + fmt.Sprintf("; per read: rdtsc %s, clock_gettime(CLOCK_BOOTTIME) %s", read(h.RDTSCNs), read(h.ClockGettimeNs))
}

// ReportHost logs the host line and reports the clock reads' costs as the
// metrics rdtsc-ns and clock_gettime-ns: every benchmark that reports an
// overhead ratio calls it once, after its loop, so that the figures it
// prints carry the machine they were measured on.
func ReportHost(b *testing.B) {
	b.Helper()
	b.StopTimer() // the host's description is no part of the benchmark's time
	h := ReadHost()
	b.Log(h)
	if h.RDTSCNs > 0 {
		b.ReportMetric(h.RDTSCNs, "rdtsc-ns")
	}
	if h.ClockGettimeNs > 0 {
		b.ReportMetric(h.ClockGettimeNs, "clock_gettime-ns")
	}
}
