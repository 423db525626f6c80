package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// A process of the app in another time namespace than rocprof-go's (a
// child the app started with unshare --time --boottime, or
// clone(CLONE_NEWTIME)) reads a shifted CLOCK_BOOTTIME: its host
// timestamps land that far (a day, for --boottime 86400) from the other
// processes' and the GPU's on the run's timeline. Each spool's header keeps
// the process's /proc/self/timens_offsets (RPG_BLOB_TIMENS); a process
// whose boottime offset differs from rocprof-go's own is named, with the
// shift, after its pass. The timestamps are not corrected: which of a
// process's records come from its own clock and which from the GPU's
// (converted by the kernel's driver, outside any time namespace) differs
// between a real GPU and the virtual one.

// ownBoottimeOffset is rocprof-go's own time namespace's boottime offset (0
// where the kernel has no time namespaces).
func ownBoottimeOffset() int64 {
	b, err := os.ReadFile("/proc/self/timens_offsets")
	if err != nil {
		return 0
	}
	ns, _ := tracing.ParseTimensOffsets(string(b))
	return ns
}

// timeNamespaceWarnings names the processes whose spools in spoolDir say
// they ran with another boottime offset than own.
func timeNamespaceWarnings(spoolDir string, own int64) []string {
	ents, err := os.ReadDir(spoolDir)
	if err != nil {
		return nil
	}
	type proc struct {
		pid  int32
		name string
		off  int64
	}
	seen := map[int32]bool{}
	var odd []proc
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "rpg-") || !strings.HasSuffix(e.Name(), ".spool") || !e.Type().IsRegular() {
			continue
		}
		r, err := tracing.Open(filepath.Join(spoolDir, e.Name()))
		if err != nil {
			continue // the outputs report unreadable spools
		}
		off, known := r.BoottimeOffset()
		info := r.Process()
		r.Close()
		if !known || off == own || seen[info.PID] {
			continue
		}
		seen[info.PID] = true
		name := info.Exe
		if len(info.Argv) > 0 {
			name = info.Argv[0]
		}
		odd = append(odd, proc{info.PID, name, off})
	}
	sort.Slice(odd, func(i, j int) bool { return odd[i].pid < odd[j].pid })
	out := make([]string, len(odd))
	for i, p := range odd {
		d := float64(p.off-own) / 1e9
		out[i] = fmt.Sprintf("pid %d (%s) ran in another time namespace than rocprof-go (unshare --time, CLONE_NEWTIME) whose boot clock is %+.3f s from rocprof-go's: "+
			"the timestamps it took itself (API calls, markers) are on that clock, %.3f s off the other processes' on a timeline; "+
			"start it in rocprof-go's time namespace to line them up (docs/troubleshooting.md)", p.pid, p.name, d, abs(d))
	}
	return out
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
