package launch

import (
	"bufio"
	"os"
	"strings"
	"sync"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// TSCEnv tells the preload library whether the CPU's time-stamp counter is
// invariant ("1") or not ("0"), so that no profiled process has to ask the CPU
// itself: cpuid traps to the hypervisor in a virtual machine (~8 us each on
// the test VMs), and every process the app starts would otherwise pay two.
// Unset, the preload library asks the CPU.
const TSCEnv = toolenv.GoTSC

var tscOnce = sync.OnceValue(func() string { return tscInvariantFrom("/proc/cpuinfo") })

// tscInvariantFrom reads the first processor's flags: the kernel reports an
// invariant TSC (CPUID 0x80000007 EDX bit 8) as constant_tsc plus
// nonstop_tsc. "" when the file cannot tell.
func tscInvariantFrom(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		var constant, nonstop bool
		for _, fl := range strings.Fields(val) {
			constant = constant || fl == "constant_tsc"
			nonstop = nonstop || fl == "nonstop_tsc"
		}
		if constant && nonstop {
			return "1"
		}
		return "0"
	}
	return ""
}
