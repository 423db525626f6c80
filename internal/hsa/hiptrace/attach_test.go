package hiptrace

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/toolenv"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// The attach-mode tests of the preload library's core (attach.c,
// attach_got.c): a program linked plainly against a fake HIP and a fake
// ROCTx library (testdata/attach) loads the library itself and calls
// rpg_attach_start, as the CLI's injector would through ptrace; the test
// plays the CLI's side of the socket and checks the process before, while
// and after each attach from /proc.

// attachFixture is the test programs, built once per test into a
// temporary directory.
type attachFixture struct {
	dir, host, late, preload string
}

func buildAttachFixture(t testing.TB) attachFixture {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	src := filepath.Join(filepath.Dir(file), "testdata", "attach")
	dir := t.TempDir()
	cc := func(args ...string) {
		out, err := exec.Command("gcc", append([]string{"-O2", "-g", "-Wall", "-Wextra", "-Werror"}, args...)...).CombinedOutput()
		require.NoError(t, err, "gcc %v: %s", args, out)
	}
	cc("-shared", "-fPIC", "-Wl,--version-script="+filepath.Join(src, "fakehip.map"), "-Wl,-soname,libfakehip.so",
		"-o", filepath.Join(dir, "libfakehip.so"), filepath.Join(src, "fakehip.c"))
	cc("-shared", "-fPIC", "-Wl,-soname,libfakeroctx.so", "-o", filepath.Join(dir, "libfakeroctx.so"), filepath.Join(src, "fakeroctx.c"))
	cc("-shared", "-fPIC", "-Wl,-z,now", "-Wl,-z,relro", "-o", filepath.Join(dir, "liblate.so"), filepath.Join(src, "late.c"),
		"-L"+dir, "-lfakehip", "-Wl,-rpath,"+dir)
	// Lazy binding: hipGetDeviceCount's slot still holds its PLT stub when
	// the first attach comes, and must hold it again after each.
	cc("-pthread", "-Wl,-z,lazy", "-o", filepath.Join(dir, "attach_host"), filepath.Join(src, "attach_host.c"),
		"-L"+dir, "-lfakehip", "-lfakeroctx", "-ldl", "-Wl,-rpath,"+dir)
	return attachFixture{dir: dir, host: filepath.Join(dir, "attach_host"), late: filepath.Join(dir, "liblate.so"),
		preload: artifact(t, "lib/librocprof-go-preload.so")}
}

// host is one running attach_host.
type host struct {
	t    testing.TB
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	pid  int
	said []string
}

func startHost(t testing.TB, f attachFixture, env []string) *host {
	cmd := exec.Command(f.host)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	h := &host{t: t, cmd: cmd, in: in, out: bufio.NewReader(out), pid: cmd.Process.Pid}
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Kill()
			_ = h.cmd.Wait()
		}
	})
	return h
}

// do sends one command and returns the program's answer.
func (h *host) do(line string) string {
	_, err := fmt.Fprintln(h.in, line)
	require.NoError(h.t, err)
	ans, err := h.out.ReadString('\n')
	require.NoError(h.t, err, "no answer to %q", line)
	ans = strings.TrimSuffix(ans, "\n")
	if !strings.HasPrefix(line, "attach ") && !strings.HasPrefix(line, "dlopen ") {
		h.said = append(h.said, ans)
	}
	return ans
}

// quit ends the program and returns everything it said but its answers
// to attach and dlopen (whose paths differ between runs).
func (h *host) quit() []string {
	_, err := fmt.Fprintln(h.in, "quit")
	require.NoError(h.t, err)
	rest, err := io.ReadAll(h.out)
	require.NoError(h.t, err)
	require.NoError(h.t, h.cmd.Wait())
	return append(h.said, strings.Split(strings.TrimSpace(string(rest)), "\n")...)
}

// mapping is one line of /proc/PID/maps.
type mapping struct {
	lo, hi uint64
	perms  string
	off    uint64
	path   string
}

func procMaps(t testing.TB, pid int) []mapping {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	require.NoError(t, err)
	var ms []mapping
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m mapping
		var dev string
		var inode uint64
		n, _ := fmt.Sscanf(l, "%x-%x %s %x %s %d %s", &m.lo, &m.hi, &m.perms, &m.off, &dev, &inode, &m.path)
		require.GreaterOrEqual(t, n, 6, "maps line %q", l)
		ms = append(ms, m)
	}
	return ms
}

// inFile reports whether addr lies in a mapping of path.
func inFile(ms []mapping, path string, addr uint64) bool {
	for _, m := range ms {
		if m.path == path && addr >= m.lo && addr < m.hi {
			return true
		}
	}
	return false
}

// fileMaps is the mappings of one file.
func fileMaps(ms []mapping, path string) []mapping {
	var r []mapping
	for _, m := range ms {
		if m.path == path {
			r = append(r, m)
		}
	}
	return r
}

func mapsOf(ms []mapping, path string) int {
	n := 0
	for _, m := range ms {
		if m.path == path {
			n++
		}
	}
	return n
}

// gotSlots reads, from the running process, the GOT slots (JUMP_SLOT and
// GLOB_DAT) of the module at path that import the named symbols.
func gotSlots(t testing.TB, pid int, path string, names ...string) map[string]uint64 {
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.DynamicSymbols()
	require.NoError(t, err)
	var base uint64
	found := false
	for _, m := range procMaps(t, pid) {
		if m.path == path && m.off == 0 {
			base, found = m.lo, true
			break
		}
	}
	require.True(t, found, "%s is not mapped in %d", path, pid)
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	require.NoError(t, err)
	defer mem.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	slots := map[string]uint64{}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA {
			continue
		}
		data, err := s.Data()
		require.NoError(t, err)
		for i := 0; i+24 <= len(data); i += 24 {
			off := binary.LittleEndian.Uint64(data[i:])
			info := binary.LittleEndian.Uint64(data[i+8:])
			typ, si := elf.R_X86_64(info&0xffffffff), info>>32
			if (typ != elf.R_X86_64_JMP_SLOT && typ != elf.R_X86_64_GLOB_DAT) || si == 0 || int(si) > len(syms) {
				continue
			}
			name := syms[si-1].Name
			if !want[name] {
				continue
			}
			var v [8]byte
			_, err := mem.ReadAt(v[:], int64(base+off))
			require.NoError(t, err)
			slots[name] = binary.LittleEndian.Uint64(v[:])
		}
	}
	for _, n := range names {
		_, ok := slots[n]
		require.True(t, ok, "%s has no GOT slot for %s", path, n)
	}
	return slots
}

func countDir(t testing.TB, dir string) int {
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(es)
}

// attachSession is the CLI's side of one attach: the configuration, the
// socket and the connection the library made.
type attachSession struct {
	spools, conf string
	ln           *net.UnixListener
	conn         *net.UnixConn
	r            *bufio.Reader
}

func newSession(t testing.TB, extra ...string) *attachSession {
	dir := t.TempDir()
	s := &attachSession{spools: filepath.Join(dir, "spools"), conf: filepath.Join(dir, "attach.conf")}
	require.NoError(t, os.Mkdir(s.spools, 0o700))
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	s.ln = ln
	lines := []string{
		toolenv.GoSpoolDir + "=" + s.spools,
		toolenv.HIPRuntimeAPITrace + "=1",
		toolenv.MarkerAPITrace + "=1",
		toolenv.GoHIPArgs + "=0",
		"# the CLI's socket",
		toolenv.GoAttachSocket + "=" + sock,
	}
	// extra NAME=VALUE lines replace the defaults of the same name.
	for _, e := range extra {
		name, _, _ := strings.Cut(e, "=")
		replaced := false
		for i, l := range lines {
			if strings.HasPrefix(l, name+"=") {
				lines[i], replaced = e, true
			}
		}
		if !replaced {
			lines = append(lines, e)
		}
	}
	require.NoError(t, os.WriteFile(s.conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return s
}

// accept waits for the library's connection and its first line.
func (s *attachSession) accept(t testing.TB) string {
	require.NoError(t, s.ln.SetDeadline(time.Now().Add(10*time.Second)))
	c, err := s.ln.AcceptUnix()
	require.NoError(t, err, "the attached library never connected")
	s.conn, s.r = c, bufio.NewReader(c)
	return s.line(t)
}

// The agent's accounts of the window's dispatches and copies ("dispatches
// <pid> ...", "copies <pid> ...", before "detached") are internal/attach's
// to read; these tests are about the slots, and skip them.
func (s *attachSession) line(t testing.TB) string {
	require.NoError(t, s.conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	for {
		l, err := s.r.ReadString('\n')
		require.NoError(t, err)
		if !strings.HasPrefix(l, "dispatches ") && !strings.HasPrefix(l, "copies ") {
			return strings.TrimSuffix(l, "\n")
		}
	}
}

// waitUnmapped waits until no mapping of path is left in the process.
func waitUnmapped(t testing.TB, pid int, path string) {
	deadline := time.Now().Add(10 * time.Second)
	for mapsOf(procMaps(t, pid), path) > 0 {
		require.True(t, time.Now().Before(deadline), "%s is still mapped in %d after the detach", path, pid)
		time.Sleep(5 * time.Millisecond)
	}
}

var hookedNames = []string{"hipGetDevice", "hipGetDeviceCount", "hipDeviceSynchronize", "roctxRangePushA", "roctxRangePop", "roctxMarkA"}

// TestAttachRedirectsRecordsAndRestores attaches to a running program three
// times (the second and third time ended by closing the socket, as a CLI
// that dies does): while attached every hooked GOT slot points into the
// library and the calls made then (and only those) are in the spool; after
// each detach the slots are byte for byte what they were (hipGetDeviceCount's
// lazy PLT stub included), the library is unmapped, the thread and
// descriptor counts are back, and the program's own output is that of the
// same run never attached. A module the program dlopens while attached
// (with a read-only GOT) is redirected and restored too.
func TestAttachRedirectsRecordsAndRestores(t *testing.T) {
	f := buildAttachFixture(t)
	script := func(h *host, attach func(round int)) []string {
		h.do("spinning") // its slot is bound before the first attach
		h.do("run 7")
		// hipGetDeviceCount is only called while attached: its slot keeps
		// its lazy PLT stub through every attach and detach.
		for round := 0; round < 3; round++ {
			h.do("run 5")
			attach(round)
			// fork handlers the library registered went with it.
			require.Equal(t, "forked 0", h.do("fork"))
			h.do("run 5")
		}
		return h.quit()
	}
	// The same commands, never attached: what the program must print.
	plain := startHost(t, f, nil)
	want := script(plain, func(round int) {
		h := plain
		h.do("run 20")
		h.do("count 3")
		h.do("spin 100")
		if round == 0 {
			h.do("dlopen " + f.late)
			h.do("late 4")
		}
	})

	h := startHost(t, f, nil)
	var before map[string]uint64
	var threads, fds int
	var mapsBefore []mapping
	got := script(h, func(round int) {
		if round == 0 {
			before = gotSlots(t, h.pid, f.host, hookedNames...)
			threads = countDir(t, fmt.Sprintf("/proc/%d/task", h.pid))
			fds = countDir(t, fmt.Sprintf("/proc/%d/fd", h.pid))
			require.Equal(t, 0, mapsOf(procMaps(t, h.pid), f.preload))
			require.True(t, inFile(procMaps(t, h.pid), f.host, before["hipGetDeviceCount"]),
				"hipGetDeviceCount's slot should still hold the program's PLT stub")
			mapsBefore = procMaps(t, h.pid)
		}
		s := newSession(t)
		t0 := time.Now()
		require.Equal(t, "started 0", h.do("attach "+f.preload+" "+s.conf))
		require.Equal(t, fmt.Sprintf("ready %d", h.pid), s.accept(t))
		t.Logf("round %d: dlopen to ready %v", round, time.Since(t0))
		// Attached already: a second start is refused, the first goes on.
		require.Equal(t, "started -114", h.do("attach "+f.preload+" "+s.conf)) // -EALREADY
		ms := procMaps(t, h.pid)
		for name, v := range gotSlots(t, h.pid, f.host, hookedNames...) {
			require.True(t, inFile(ms, f.preload, v), "round %d: %s's slot %#x is not in the library", round, name, v)
		}
		h.do("run 20")
		h.do("count 3")
		h.do("spin 100") // the spinning thread's calls while attached
		late := 0
		if round == 0 {
			require.Equal(t, "loaded", h.do("dlopen "+f.late))
			// The control thread rescans within ~10 ms of a dlopen.
			deadline := time.Now().Add(5 * time.Second)
			for {
				v := gotSlots(t, h.pid, f.late, "hipGetDevice")["hipGetDevice"]
				if inFile(procMaps(t, h.pid), f.preload, v) {
					break
				}
				require.True(t, time.Now().Before(deadline), "the late module's slot was never redirected")
				time.Sleep(2 * time.Millisecond)
			}
			h.do("late 4")
			late = 4
		}
		var lateSlot uint64
		if round == 0 {
			lateSlot = gotSlots(t, h.pid, f.late, "hipGetDevice")["hipGetDevice"]
		}
		t1 := time.Now()
		if round == 0 {
			_, err := s.conn.Write([]byte("detach\n"))
			require.NoError(t, err)
			l := s.line(t)
			var pid, restored int
			var lost uint64
			_, err = fmt.Sscanf(l, "detached %d %d %d", &pid, &restored, &lost)
			require.NoError(t, err, "after detach the library said %q", l)
			require.Equal(t, h.pid, pid)
			// The program's seven slots (hipStreamSynchronize's too) and
			// the late module's one.
			require.Equal(t, len(hookedNames)+2, restored, l)
			require.Zero(t, lost)
		} else {
			require.NoError(t, s.conn.Close()) // EOF: the CLI is gone
		}
		waitUnmapped(t, h.pid, f.preload)
		t.Logf("round %d: detach to unmapped %v", round, time.Since(t1))
		require.Equal(t, before, gotSlots(t, h.pid, f.host, hookedNames...), "round %d: the slots differ from before the attach", round)
		if round == 0 {
			v := gotSlots(t, h.pid, f.late, "hipGetDevice")["hipGetDevice"]
			require.NotEqual(t, lateSlot, v)
			require.True(t, inFile(procMaps(t, h.pid), f.dir+"/libfakehip.so", v), "the late module's slot %#x is not fakehip's after the detach", v)
		}
		// The control thread's exit is the last thing: give it a moment.
		deadline := time.Now().Add(5 * time.Second)
		for countDir(t, fmt.Sprintf("/proc/%d/task", h.pid)) != threads && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		require.Equal(t, threads, countDir(t, fmt.Sprintf("/proc/%d/task", h.pid)), "round %d: threads", round)
		require.Equal(t, fds, countDir(t, fmt.Sprintf("/proc/%d/fd", h.pid)), "round %d: descriptors", round)
		// The GOT pages made writable for the stores have their protection
		// back: the program's and its libraries' mappings are as before.
		for _, p := range []string{f.host, f.dir + "/libfakehip.so", f.dir + "/libfakeroctx.so"} {
			require.Equal(t, fileMaps(mapsBefore, p), fileMaps(procMaps(t, h.pid), p), "round %d: mappings of %s", round, p)
		}

		tr := readTrace(t, s.spools)
		require.Len(t, tr.pids, 1, "round %d: one spool", round)
		require.Zero(t, tr.dropped)
		n := tr.count(tracing.DomainHIPRuntime)
		require.Equal(t, 20+late, n["hipGetDevice"], "round %d: hipGetDevice calls made while attached", round)
		require.Equal(t, 3, n["hipGetDeviceCount"], "round %d", round)
		require.GreaterOrEqual(t, n["hipDeviceSynchronize"], 100, "round %d: the spinning thread's calls", round)
		marks, ranges := 0, 0
		for _, m := range tr.markers {
			switch m.Function {
			case tracing.MarkerMark:
				marks++
			case tracing.MarkerThreadRange:
				ranges++
				require.Equal(t, "iteration", m.Msg)
			}
		}
		require.Equal(t, 20, marks, "round %d: marks", round)
		require.Equal(t, 20, ranges, "round %d: push/pop ranges", round)
	})
	require.Equal(t, want, got, "the program's own output changed under the attaches")
}

// TestAttachRefusedUnderLaunchMode: a process the launcher profiles (the
// library in LD_PRELOAD with a spool directory) answers -EALREADY and is
// left as it was.
func TestAttachRefusedUnderLaunchMode(t *testing.T) {
	f := buildAttachFixture(t)
	spools := t.TempDir()
	h := startHost(t, f, []string{"LD_PRELOAD=" + f.preload, toolenv.GoSpoolDir + "=" + spools, toolenv.HIPRuntimeAPITrace + "=1"})
	s := newSession(t)
	require.Equal(t, "started -114", h.do("attach "+f.preload+" "+s.conf)) // -EALREADY
	h.do("run 3")
	h.quit()
	require.Equal(t, 3, readTrace(t, spools).count(tracing.DomainHIPRuntime)["hipGetDevice"])
}

// TestAttachForkChild forks while attached: the child (one thread, the
// patched slots and no control thread) records nothing into its parent's
// spool; attached itself (the injector's dlopen returns the library it
// inherited), it records its own calls into its own spool, and its detach
// unloads that library from the child. The parent stays attached meanwhile
// and records only its own calls.
func TestAttachForkChild(t *testing.T) {
	f := buildAttachFixture(t)
	h := startHost(t, f, nil)
	h.do("spinning")
	parent := newSession(t)
	require.Equal(t, "started 0", h.do("attach "+f.preload+" "+parent.conf))
	require.Equal(t, fmt.Sprintf("ready %d", h.pid), parent.accept(t))

	child := newSession(t)
	goFile := filepath.Join(t.TempDir(), "go")
	_, err := fmt.Fprintf(h.in, "forkrun %s %s %s 6\n", f.preload, child.conf, goFile)
	require.NoError(t, err)
	line := func() string {
		l, err := h.out.ReadString('\n')
		require.NoError(t, err)
		return strings.TrimSuffix(l, "\n")
	}
	require.Equal(t, "child started 0", line())
	var cpid int
	ready := child.accept(t)
	_, err = fmt.Sscanf(ready, "ready %d", &cpid)
	require.NoError(t, err, "the child said %q", ready)
	require.NotEqual(t, h.pid, cpid)
	v := gotSlots(t, cpid, f.host, "hipGetDevice")["hipGetDevice"]
	require.True(t, inFile(procMaps(t, cpid), f.preload, v), "the child's slot %#x is not redirected", v)
	require.NoError(t, os.WriteFile(goFile, nil, 0o600))
	require.Equal(t, "child ran 6 devs=42", line())
	_, err = child.conn.Write([]byte("detach\n"))
	require.NoError(t, err)
	var pid, restored int
	l := child.line(t)
	_, err = fmt.Sscanf(l, "detached %d %d", &pid, &restored)
	require.NoError(t, err, "the child said %q", l)
	require.Equal(t, cpid, pid)
	require.Equal(t, "child unmapped 1", line())
	require.Equal(t, "forked 0", line())
	ct := readTrace(t, child.spools)
	require.Equal(t, []int32{int32(cpid)}, ct.pids)
	require.Equal(t, 6, ct.count(tracing.DomainHIPRuntime)["hipGetDevice"])

	h.do("run 3")
	_, err = parent.conn.Write([]byte("detach\n"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(parent.line(t), "detached "))
	waitUnmapped(t, h.pid, f.preload)
	pt := readTrace(t, parent.spools)
	require.Equal(t, []int32{int32(h.pid)}, pt.pids, "one spool, the parent's")
	require.Equal(t, 3, pt.count(tracing.DomainHIPRuntime)["hipGetDevice"])
	require.Contains(t, h.quit(), "spinner ok")
}

// TestAttachDetachWaitsForBlockedCall detaches while a thread is inside a
// wrapper, blocked in the real call: past the drain bound the library says
// "busy 1" before "detached", restores every slot and stays loaded, inert,
// refusing a new attach (-EBUSY); once the blocked call has returned
// through it, the library unloads itself (its thread gone with it), a new
// attach works, and the process goes on and ends as it would have.
func TestAttachDetachWaitsForBlockedCall(t *testing.T) {
	f := buildAttachFixture(t)
	h := startHost(t, f, nil)
	h.do("spinning")
	names := append([]string{"hipStreamSynchronize"}, hookedNames...)
	h.do("run 1")
	before := gotSlots(t, h.pid, f.host, names...)
	threads := countDir(t, fmt.Sprintf("/proc/%d/task", h.pid))
	s := newSession(t, toolenv.GoTestAttachDrainMs+"=300")
	require.Equal(t, "started 0", h.do("attach "+f.preload+" "+s.conf))
	require.Equal(t, fmt.Sprintf("ready %d", h.pid), s.accept(t))
	require.Equal(t, "blocked", h.do("block"))
	_, err := s.conn.Write([]byte("detach\n"))
	require.NoError(t, err)
	require.Equal(t, "busy 1", s.line(t))
	require.True(t, strings.HasPrefix(s.line(t), fmt.Sprintf("detached %d ", h.pid)))
	require.Equal(t, before, gotSlots(t, h.pid, f.host, names...))
	time.Sleep(50 * time.Millisecond)
	require.Positive(t, mapsOf(procMaps(t, h.pid), f.preload), "inert, the library stays loaded")
	again := newSession(t)
	require.Equal(t, "started -16", h.do("attach "+f.preload+" "+again.conf)) // -EBUSY
	require.Equal(t, "unblocked", h.do("unblock"))
	waitUnmapped(t, h.pid, f.preload)
	deadline := time.Now().Add(5 * time.Second)
	for countDir(t, fmt.Sprintf("/proc/%d/task", h.pid)) != threads && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, threads, countDir(t, fmt.Sprintf("/proc/%d/task", h.pid)))
	require.Equal(t, before, gotSlots(t, h.pid, f.host, names...))
	require.Equal(t, "started 0", h.do("attach "+f.preload+" "+again.conf))
	require.Equal(t, fmt.Sprintf("ready %d", h.pid), again.accept(t))
	h.do("run 2")
	_, err = again.conn.Write([]byte("detach\n"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(again.line(t), "detached "))
	waitUnmapped(t, h.pid, f.preload)
	require.Equal(t, 2, readTrace(t, again.spools).count(tracing.DomainHIPRuntime)["hipGetDevice"])
	h.do("run 2")
	require.Equal(t, "forked 0", h.do("fork"))
	require.Contains(t, h.quit(), "spinner ok")
}

// TestAttachManyTimes attaches and detaches 25 times in a row: each attach
// finds a fresh library (its static TLS, fork handlers and thread-exit key
// given back by the last unload), records its own window into its own
// spool, and leaves the process as it found it.
func TestAttachManyTimes(t *testing.T) {
	f := buildAttachFixture(t)
	h := startHost(t, f, nil)
	h.do("spinning")
	h.do("run 1")
	before := gotSlots(t, h.pid, f.host, hookedNames...)
	threads := countDir(t, fmt.Sprintf("/proc/%d/task", h.pid))
	for i := 0; i < 25; i++ {
		s := newSession(t)
		require.Equal(t, "started 0", h.do("attach "+f.preload+" "+s.conf), "attach %d", i)
		require.Equal(t, fmt.Sprintf("ready %d", h.pid), s.accept(t), "attach %d", i)
		h.do(fmt.Sprintf("run %d", i+1))
		_, err := s.conn.Write([]byte("detach\n"))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(s.line(t), "detached "), "attach %d", i)
		waitUnmapped(t, h.pid, f.preload)
		require.Equal(t, before, gotSlots(t, h.pid, f.host, hookedNames...), "attach %d", i)
		require.Equal(t, i+1, readTrace(t, s.spools).count(tracing.DomainHIPRuntime)["hipGetDevice"], "attach %d", i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for countDir(t, fmt.Sprintf("/proc/%d/task", h.pid)) != threads && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, threads, countDir(t, fmt.Sprintf("/proc/%d/task", h.pid)))
	require.Equal(t, "forked 0", h.do("fork"))
	require.Contains(t, h.quit(), "spinner ok")
}

// BenchmarkAttachedHIPCall times a cheap HIP call (the fake hipGetDevice,
// the median 10k-call slice of 1M calls, median of 5 rounds) in one process: never attached, attached
// with HIP tracing (the wrapper, its record and the in-flight count), and
// attached with only marker tracing (HIP's slots are then left alone), and
// again after the detach (back to the bare call); and, for comparison, in a
// second process the launcher would profile (LD_PRELOAD, the same
// variables), the same loop traced.
func BenchmarkAttachedHIPCall(b *testing.B) {
	f := buildAttachFixture(b)
	h := startHost(b, f, nil)
	launched := startHost(b, f, []string{"LD_PRELOAD=" + f.preload, toolenv.GoSpoolDir + "=" + b.TempDir(),
		toolenv.HIPRuntimeAPITrace + "=1", toolenv.MarkerAPITrace + "=1", toolenv.GoHIPArgs + "=0"})
	timeOn := func(h *host) float64 {
		var v []float64
		for r := 0; r < 5; r++ {
			var ns float64
			_, err := fmt.Sscanf(h.do("time 1000000"), "ns_per_call %f", &ns)
			require.NoError(b, err)
			v = append(v, ns)
		}
		return testsys.Median(v)
	}
	timeIt := func() float64 {
		var v []float64
		for r := 0; r < 5; r++ {
			var ns float64
			_, err := fmt.Sscanf(h.do("time 1000000"), "ns_per_call %f", &ns)
			require.NoError(b, err)
			v = append(v, ns)
		}
		return testsys.Median(v)
	}
	for i := 0; i < b.N; i++ {
		bare := timeIt()
		attached := func(extra ...string) float64 {
			s := newSession(b, extra...)
			require.Equal(b, "started 0", h.do("attach "+f.preload+" "+s.conf))
			require.Equal(b, fmt.Sprintf("ready %d", h.pid), s.accept(b))
			ns := timeIt()
			_, err := s.conn.Write([]byte("detach\n"))
			require.NoError(b, err)
			s.line(b)
			waitUnmapped(b, h.pid, f.preload)
			return ns
		}
		traced := attached()
		markers := attached(toolenv.HIPRuntimeAPITrace + "=0")
		after := timeIt()
		b.ReportMetric(bare, "bare-ns/call")
		b.ReportMetric(traced-bare, "attached-traced-added-ns")
		b.ReportMetric(markers-bare, "attached-hip-off-added-ns")
		b.ReportMetric(after-bare, "after-detach-added-ns")
		b.ReportMetric(timeOn(launched)-bare, "launched-traced-added-ns")
	}
}

// TestAttachErrors: a configuration that is not NAME=VALUE lines is refused
// by rpg_attach_start itself (-EINVAL, no thread started); one without a
// spool directory gets "error <one line>" on the socket naming the variable,
// and the library then unloads itself, the process untouched.
func TestAttachErrors(t *testing.T) {
	f := buildAttachFixture(t)
	h := startHost(t, f, nil)
	h.do("spinning")
	h.do("run 1")
	before := gotSlots(t, h.pid, f.host, hookedNames...)
	bad := filepath.Join(t.TempDir(), "bad.conf")
	require.NoError(t, os.WriteFile(bad, []byte("not a variable\n"), 0o600))
	require.Equal(t, "started -22", h.do("attach "+f.preload+" "+bad))           // -EINVAL
	require.Equal(t, "started -2", h.do("attach "+f.preload+" "+bad+".missing")) // -ENOENT
	waitUnmapped(t, h.pid, f.preload)

	s := newSession(t, toolenv.GoSpoolDir+"=")
	require.Equal(t, "started 0", h.do("attach "+f.preload+" "+s.conf))
	l := s.accept(t)
	require.True(t, strings.HasPrefix(l, "error ") && strings.Contains(l, toolenv.GoSpoolDir), "the library said %q", l)
	require.True(t, strings.HasPrefix(s.line(t), fmt.Sprintf("detached %d 0 0", h.pid)))
	waitUnmapped(t, h.pid, f.preload)
	require.Equal(t, before, gotSlots(t, h.pid, f.host, hookedNames...))
	h.do("run 2")
	require.Contains(t, h.quit(), "spinner ok")
}
