package inject

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/stretchr/testify/require"
)

// otherUserSetup builds a sleeping target, the test library and a copy of
// this test binary where the second local user can run them, and returns
// their paths and a directory that user may write in.
func otherUserSetup(t *testing.T) (uid, gid int, target, lib, self, shared string) {
	t.Helper()
	uid, gid = testsys.SecondUser(t)
	shared = testsys.SharedDir(t)
	base := filepath.Dir(shared)
	target = cc(t, base, "target", "target.c", "-pthread")
	lib = cc(t, base, "inj.so", "inj.c", "-shared", "-fPIC")
	self = filepath.Join(base, "inject.test")
	in, err := os.Open(os.Args[0])
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(self, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	return
}

// asUser makes cmd run as uid:gid with the helper copy of the test binary.
func asUser(uid, gid int, self string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		cmd.Path, cmd.Args[0] = self, self
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
}

// TestAnotherUsersProcessIsRefused: an injector without CAP_SYS_PTRACE,
// run as the second local user, is refused root's process by the checks
// and, asked to seize it anyway, by the kernel (EPERM), with the same
// one-line cause and fix; its own process it injects into.
func TestAnotherUsersProcessIsRefused(t *testing.T) {
	uid, gid, target, lib, self, shared := otherUserSetup(t)
	p := start(t, cmdOf(target, "sleep"))
	want := fmt.Sprintf("error cannot attach to PID %d: it belongs to user root (uid 0) and rocprof-go runs as user %s (uid %d) without CAP_SYS_PTRACE; "+
		"run rocprof-go as the process's user, or as root (sudo)", p.pid, testsys.SecondUserName, uid)
	require.Equal(t, want, runHelper(t, "preflight", asUser(uid, gid, self), nil, p.pid, lib, "-"))
	require.Equal(t, want, runHelper(t, "inject", asUser(uid, gid, self), nil, p.pid, lib, filepath.Join(shared, "m")))
	require.Equal(t, want, runHelper(t, "seize", asUser(uid, gid, self), nil, p.pid, lib, "-"), "the kernel's EPERM, explained")
	require.Zero(t, tracerOf(t, p.pid))
	_, err := os.Stat(filepath.Join(shared, "m"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// The second user's own process: injected without any privilege.
	cmd := cmdOf(target, "sleep")
	asUser(uid, gid, target)(cmd)
	own := start(t, cmd)
	mark := filepath.Join(shared, "own")
	require.Equal(t, "ok 42", runHelper(t, "inject", asUser(uid, gid, self), nil, own.pid, lib, mark))
	marker(t, mark, own.pid)
}

// TestYamaScopes: Yama's ptrace_scope 1, 2 and 3 each refuse with their
// own cause and fix; 1 and 2 admit CAP_SYS_PTRACE (root), 3 no one. On a
// kernel with Yama the sysctl itself is set (and restored); on one without
// (the checks then read nothing) the same values come from a file the
// checks are pointed at.
func TestYamaScopes(t *testing.T) {
	uid, gid, target, lib, self, _ := otherUserSetup(t)
	const real = "/proc/sys/kernel/yama/ptrace_scope"
	// A file standing for the sysctl: on a kernel without Yama for every
	// value, on one with Yama for 3, which could not be lowered again
	// until the machine reboots.
	fake := filepath.Join(t.TempDir(), "ptrace_scope")
	require.NoError(t, os.WriteFile(fake, []byte("0\n"), 0o644))
	require.NoError(t, os.Chmod(filepath.Dir(fake), 0o755))
	saved := yamaScopePath
	t.Cleanup(func() { yamaScopePath = saved })
	orig, err := os.ReadFile(real)
	hasYama := err == nil
	if hasYama {
		t.Logf("this kernel has Yama (ptrace_scope %s): 0, 1 and 2 set for real, 3 through a file", strings.TrimSpace(string(orig)))
		t.Cleanup(func() { require.NoError(t, os.WriteFile(real, orig, 0o644)) })
	} else {
		t.Log("this kernel has no Yama: the checks read a file standing for ptrace_scope")
	}
	cmd := cmdOf(target, "sleep")
	asUser(uid, gid, target)(cmd)
	p := start(t, cmd) // the second user's own process, not the helper's child
	prefix := fmt.Sprintf("error cannot attach to PID %d: ", p.pid)
	for _, c := range []struct {
		scope          string
		asUser, asRoot string
	}{
		{"0", "ok 0", ""},
		{"1", prefix + "Yama ptrace_scope is 1: only a process's ancestors may attach to it; run rocprof-go as root or with CAP_SYS_PTRACE, " +
			"or allow attaching with `sysctl kernel.yama.ptrace_scope=0`", ""},
		{"2", prefix + "Yama ptrace_scope is 2: only an administrator (CAP_SYS_PTRACE) may attach; run rocprof-go as root (sudo) or with CAP_SYS_PTRACE", ""},
		{"3", prefix + "Yama ptrace_scope is 3: attaching is disabled until the next reboot; start the application under rocprof-go instead (launch mode), " +
			"or reboot with kernel.yama.ptrace_scope below 3",
			fmt.Sprintf("cannot attach to PID %d: Yama ptrace_scope is 3", p.pid)},
	} {
		path := fake
		if hasYama && c.scope != "3" {
			path = real
		}
		yamaScopePath = path
		env := []string{yamaEnv + "=" + path}
		require.NoError(t, os.WriteFile(path, []byte(c.scope+"\n"), 0o644), "scope %s", c.scope)
		require.Equal(t, c.asUser, runHelper(t, "preflight", asUser(uid, gid, self), env, p.pid, lib, "-"), "scope %s as the process's user", c.scope)
		err := Preflight(p.pid, lib)
		if c.asRoot == "" {
			require.NoError(t, err, "scope %s as root", c.scope)
		} else {
			requireError(t, err, p.pid, c.asRoot)
		}
		if path == real && c.scope != "0" {
			// The kernel refuses as well, and the refusal is explained.
			require.Equal(t, c.asUser, runHelper(t, "seize", asUser(uid, gid, self), env, p.pid, lib, "-"), "scope %s, PTRACE_SEIZE", c.scope)
		}
		require.NoError(t, os.WriteFile(path, []byte("0\n"), 0o644))
	}
}

// TestUserNamespaceWithoutCapSysPtrace: an injector in a user namespace of
// its own (root inside, as an unprivileged container runtime makes it)
// holds no CAP_SYS_PTRACE over a process outside: the checks say so, and
// the kernel's EPERM on PTRACE_SEIZE gets the same explanation.
func TestUserNamespaceWithoutCapSysPtrace(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	p := start(t, cmdOf(target, "sleep"))
	inNS := func(cmd *exec.Cmd) {
		cmd.Args = append([]string{"unshare", "--user", "--map-root-user", "--", cmd.Path}, cmd.Args[1:]...)
		unshare, err := exec.LookPath("unshare")
		require.NoError(t, err)
		cmd.Path = unshare
	}
	want := fmt.Sprintf("error cannot attach to PID %d: rocprof-go runs in a user namespace (a container) without CAP_SYS_PTRACE over the process's namespace; "+
		"run rocprof-go in the process's own namespace (inside its container, or with nsenter) or on the host as root", p.pid)
	require.Equal(t, want, runHelper(t, "preflight", inNS, nil, p.pid, lib, "-"))
	require.Equal(t, want, runHelper(t, "seize", inNS, nil, p.pid, lib, "-"), "the kernel's EPERM, explained")
	require.Zero(t, tracerOf(t, p.pid))
}

// TestStaticAndI386ProgramsAreRefused: a statically linked x86-64 program
// has no loader to call; a 32-bit i386 one is another architecture.
func TestStaticAndI386ProgramsAreRefused(t *testing.T) {
	dir := t.TempDir()
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	static := start(t, cmdOf(cc(t, dir, "static64", "static.c", "-static")))
	err := Preflight(static.pid, lib)
	requireError(t, err, static.pid, "it is statically linked: it has no dynamic loader to load the profiler with; relink the application dynamically (without -static)")
	_, err = Inject(context.Background(), static.pid, lib, "rpg_test_mark", "-")
	requireError(t, err, static.pid, "statically linked")

	i386 := start(t, cmdOf(cc(t, dir, "static32", "static.c", "-m32", "-static")))
	err = Preflight(i386.pid, lib)
	requireError(t, err, i386.pid, "it is a 32-bit i386 program: only x86-64 processes can be profiled; rebuild the application for x86-64")
	require.Zero(t, tracerOf(t, static.pid)+tracerOf(t, i386.pid))
}

// TestExitDuringTheAttach: a process that exits inside the injected call,
// one killed while a thread is followed to a system call, one gone before
// and a zombie: each a clean *Error, nothing left (the exit status stays
// the parent's to collect).
func TestExitDuringTheAttach(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	p := start(t, cmdOf(target, "sleep"))
	_, err := Inject(ctx, p.pid, lib, "rpg_test_exit", "-")
	requireError(t, err, p.pid, "it exited during the attach")
	require.True(t, Exited(err))
	err = p.cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the parent collects the exit status")
	require.Equal(t, 3, ee.ExitCode())

	err = Preflight(p.pid, lib)
	requireError(t, err, p.pid, "no process has this PID")

	// Killed while its only thread, which makes no system call, is followed.
	spin := start(t, cmdOf(target, "spin"))
	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = spin.cmd.Process.Kill()
	}()
	_, err = Inject(ctx, spin.pid, lib, "rpg_test_mark", filepath.Join(dir, "never"))
	requireError(t, err, spin.pid, "it exited during the attach")
	_, err = os.Stat(filepath.Join(dir, "never"))
	require.ErrorIs(t, err, os.ErrNotExist)

	zombie := exec.Command("true")
	require.NoError(t, zombie.Start())
	t.Cleanup(func() { _ = zombie.Wait() })
	require.Eventually(t, func() bool {
		st, err := readStat(procPath(zombie.Process.Pid, "stat"))
		return err == nil && st.state == 'Z'
	}, 10*time.Second, time.Millisecond)
	requireError(t, Preflight(zombie.Process.Pid, lib), zombie.Process.Pid, "it has exited (true is a zombie waiting for its parent)")
}

// TestNoSafePointIsAnError: a process whose only thread never makes a
// system call is not injected into: the search ends at the deadline with
// the error saying so, the thread left running untraced.
func TestNoSafePointIsAnError(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	p := start(t, cmdOf(target, "spin"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := Inject(ctx, p.pid, lib, "rpg_test_mark", "-")
	requireError(t, err, p.pid, "none of its 1 threads reached a point where loading a library is safe")
	require.Zero(t, tracerOf(t, p.pid))
	st, err := readStat(procPath(p.pid, "stat"))
	require.NoError(t, err)
	require.Equal(t, byte('R'), st.state)
}

// TestAlreadyTracedProcess: a process another tracer holds is refused,
// naming the tracer; once the tracer is gone the injection works.
func TestAlreadyTracedProcess(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	p := start(t, cmdOf(target, "sleep"))

	tracer := exec.Command(os.Args[0], "-test.run=^$", strconv.Itoa(p.pid), lib, "-")
	tracer.Env = append(os.Environ(), helperEnv+"=trace")
	out, err := tracer.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, tracer.Start())
	t.Cleanup(func() { _ = tracer.Process.Kill(); _ = tracer.Wait() })
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	require.Equal(t, "traced", strings.TrimSpace(string(buf[:n])))

	want := fmt.Sprintf("it is already traced by PID %d (inject.test), a debugger or another tracer; detach that tracer (quit gdb or strace) and attach again", tracer.Process.Pid)
	requireError(t, Preflight(p.pid, lib), p.pid, want)
	_, err = Inject(context.Background(), p.pid, lib, "rpg_test_mark", "-")
	requireError(t, err, p.pid, want)

	require.NoError(t, tracer.Process.Kill())
	_ = tracer.Wait()
	require.Eventually(t, func() bool { return tracerOf(t, p.pid) == 0 }, 5*time.Second, time.Millisecond)
	mark := filepath.Join(dir, "mark")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ret, err := Inject(ctx, p.pid, lib, "rpg_test_mark", mark)
	require.NoError(t, err)
	require.Equal(t, 42, ret)
	marker(t, mark, p.pid)
}

// TestAnotherMountNamespace: where the library's path is another file (or
// none) in the process's mount namespace, the checks refuse before any
// ptrace.
func TestAnotherMountNamespace(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread")
	libDir := filepath.Join(dir, "lib")
	require.NoError(t, os.Mkdir(libDir, 0o755))
	lib := cc(t, libDir, "inj.so", "inj.c", "-shared", "-fPIC")
	other := cc(t, dir, "small.so", "small.c", "-shared", "-fPIC")
	for _, c := range []struct{ setup, what string }{
		{`mount -t tmpfs rpg-inject-test "$1" && cp "$2" "$1/inj.so"`, "is a different file"},
		{`mount -t tmpfs rpg-inject-test "$1"`, "is missing"},
	} {
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
			c.setup+` || exit 125; exec "$3" sleep`, "sh", libDir, other, target)
		p := start(t, cmd)
		err := Preflight(p.pid, lib)
		requireError(t, err, p.pid, fmt.Sprintf("it runs in another mount namespace (a container) where %s %s; "+
			"run rocprof-go inside that container, or bind-mount %s there at the same path", lib, c.what, libDir))
	}
}

// TestDescendants: a tree of processes listed breadth-first, by the
// children files and by the /proc scan alike.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `sleep 60 & /bin/sh -c 'sleep 60 & sleep 60 & echo ready; wait' & wait`)
	p := start(t, cmd)
	t.Cleanup(func() {
		// The sleeps hold the test's stderr: they go with the shells.
		ds, _ := Descendants(p.pid)
		for _, d := range ds {
			_ = syscall.Kill(d, syscall.SIGKILL)
		}
	})
	var got []int
	require.Eventually(t, func() bool {
		var err error
		got, err = Descendants(p.pid)
		require.NoError(t, err)
		return len(got) == 4
	}, 10*time.Second, 10*time.Millisecond)
	children := childrenFile(p.pid)
	require.Len(t, children, 2)
	require.ElementsMatch(t, children, got[:2], "the children first")
	parents := parentsByScan()
	require.Equal(t, got, descendants(p.pid, func(q int) []int { return parents[q] }), "the /proc scan agrees")
	for _, d := range got {
		st, err := readStat(procPath(d, "stat"))
		require.NoError(t, err)
		require.Contains(t, []string{"sh", "sleep"}, st.comm)
	}
	_, err := Descendants(1 << 30)
	require.Error(t, err)
}

func TestErrorText(t *testing.T) {
	e := &Error{PID: 7, Cause: "it is stopped", Fix: "resume it", Err: syscall.EPERM}
	require.Equal(t, "cannot attach to PID 7: it is stopped; resume it", e.Error())
	require.ErrorIs(t, e, syscall.EPERM)
	require.False(t, Exited(e))
	require.True(t, Exited(exitedError(7, nil)))
}
