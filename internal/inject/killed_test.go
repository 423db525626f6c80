package inject

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInjectorKilledAtAnyPoint: the injector (the test binary as the
// "inject" helper) is killed with SIGKILL at each step of an injection
// (phaseHook's names: seized, written, started, running in a 600 ms
// call, done, read, left, restored) and after delays swept over the
// injection; each time the target, a thread blocked in read() with live
// vector registers and errno, goes on exactly: the line written to it
// afterwards is read whole with its registers and errno intact, its
// nanosleep sleeps its second, its other thread computes the reference
// sum, it exits 0. Nothing of the injection is left: no tracer, no new
// executable mapping but the library's (loaded exactly when its function
// ran), the tail of libc's code segment zeros or the whole trampoline
// (the bytes an injector killed before putting them back leaves, never
// executed again).
func TestInjectorKilledAtAnyPoint(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	ref, err := runOut(target, "compute")
	require.NoError(t, err)

	type kill struct {
		phase string
		delay time.Duration
	}
	var kills []kill
	for _, p := range []string{"seized", "written", "started", "running", "done", "read", "left", "restored"} {
		kills = append(kills, kill{phase: p})
	}
	for _, d := range []time.Duration{0, 2, 4, 7, 10, 15, 25} {
		kills = append(kills, kill{phase: "none", delay: d * time.Millisecond})
	}
	left := 0
	for i, k := range kills {
		name := k.phase
		if k.phase == "none" {
			name = k.delay.String()
		}
		t.Run(name, func(t *testing.T) {
			p := start(t, cmdOf(target, "regs"))
			waitSyscall(t, p.pid, p.pid, sysRead)
			before := execMappings(t, p.pid)

			mark := filepath.Join(dir, "mark"+strconv.Itoa(i))
			h := exec.Command(os.Args[0], "-test.run=^$", strconv.Itoa(p.pid), lib, mark)
			h.Env = append(os.Environ(), helperEnv+"=inject", stopAtEnv+"="+k.phase)
			if k.phase == "running" {
				h.Env = append(h.Env, symEnv+"=rpg_test_slow")
			}
			out, err := h.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, h.Start())
			lines := bufio.NewScanner(out)
			require.True(t, lines.Scan())
			require.Equal(t, "start", lines.Text())
			if k.phase == "none" {
				time.Sleep(k.delay)
			} else {
				require.True(t, lines.Scan(), "the injector ended before %s", k.phase)
				require.Equal(t, "phase "+k.phase, lines.Text())
				if k.phase == "running" {
					time.Sleep(100 * time.Millisecond) // inside the 600 ms call
				}
			}
			require.NoError(t, h.Process.Signal(syscall.SIGKILL))
			_ = h.Wait()
			require.Eventually(t, func() bool { return tracerOf(t, p.pid) == 0 }, 5*time.Second, time.Millisecond)

			_, err = p.stdin.Write([]byte("hello\n"))
			require.NoError(t, err)
			require.Equal(t, "read=6 hello vectors=intact errno=1234", p.line(t), "killed at %s", name)
			require.Equal(t, "sleeping", p.line(t))
			// Settled (the thread went on): what is left, during its sleep.
			after := execMappings(t, p.pid)
			loaded := false
			for m := range after {
				if before[m] {
					continue
				}
				require.True(t, strings.HasSuffix(m, " "+lib), "a new executable mapping: %s", m)
				loaded = true
			}
			_, err = os.Stat(mark)
			require.Equal(t, loaded, err == nil, "library loaded %v, its function ran: %v", loaded, err)
			if tailLeft(t, p.pid) {
				left++
			}
			var ms, r int
			var vec string
			_, err = fmt.Sscanf(p.line(t), "slept=%d ret=%d vectors=%s", &ms, &r, &vec)
			require.NoError(t, err)
			require.Zero(t, r)
			require.GreaterOrEqual(t, ms, 1000)
			require.Equal(t, "intact", vec)
			require.Equal(t, strings.TrimSpace(ref), p.line(t))

			require.NoError(t, p.cmd.Wait())
		})
	}
	t.Logf("%d kills; the trampoline's bytes stayed in the segment tail after %d", len(kills), left)
}

// execMappings is the executable mappings of pid, "start-end path".
func execMappings(t *testing.T, pid int) map[string]bool {
	maps, err := readMaps(pid)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, m := range maps {
		if strings.Contains(m.perms, "x") {
			out[fmt.Sprintf("%x-%x %s", m.start, m.end, m.path)] = true
		}
	}
	return out
}

// tailLeft requires the tail of libc's code segment to be zeros or the
// whole trampoline, and says which.
func tailLeft(t *testing.T, pid int) bool {
	maps, err := readMaps(pid)
	require.NoError(t, err)
	for _, m := range maps {
		if !strings.HasPrefix(m.perms, "r-x") || !libcName.MatchString(filepath.Base(m.path)) {
			continue
		}
		start, end, ok := segmentTail(pid, m)
		require.True(t, ok, "libc's code segment has no tail")
		b := make([]byte, end-start)
		f, err := os.Open(procPath(pid, "mem"))
		require.NoError(t, err)
		defer f.Close()
		_, err = f.ReadAt(b, int64(start))
		require.NoError(t, err)
		if bytes.Count(b, []byte{0}) == len(b) {
			return false
		}
		want := make([]byte, len(b))
		copy(want[(start+63)&^63-start:], trampolineCode)
		require.Equal(t, want, b, "the tail holds something else than zeros and the trampoline")
		return true
	}
	t.Fatal("no libc code mapping")
	return false
}
