package inject

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the injector run as another user, in a user
// namespace, or as a tracer: helperEnv names the part it plays.
const (
	helperEnv = "RPG_INJECT_TEST_HELPER"
	yamaEnv   = "RPG_INJECT_TEST_YAMA" // the helper's yamaScopePath
	// stopAtEnv names the step of the injection (phaseHook's names) at
	// which the "inject" helper prints "phase NAME" and waits to be
	// killed (it prints "start" first); symEnv the function it calls
	// (rpg_test_mark by default).
	stopAtEnv = "RPG_INJECT_TEST_STOP_AT"
	symEnv    = "RPG_INJECT_TEST_SYM"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		if p := os.Getenv(yamaEnv); p != "" {
			yamaScopePath = p
		}
		os.Exit(helper(role, os.Args[len(os.Args)-3:]))
	}
	os.Exit(m.Run())
}

// helper plays a role with args (pid, lib, arg) and prints "ok <ret>" or
// "error <message>".
func helper(role string, args []string) int {
	pid, _ := strconv.Atoi(args[0])
	lib, arg := args[1], args[2]
	var err error
	ret := 0
	switch role {
	case "preflight":
		err = Preflight(pid, lib)
	case "inject":
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if at := os.Getenv(stopAtEnv); at != "" {
			fmt.Println("start") // ("none": only this line)
			phaseHook = func(p string) {
				if p == at {
					fmt.Println("phase", p)
					select {}
				}
			}
		}
		sym := "rpg_test_mark"
		if s := os.Getenv(symEnv); s != "" {
			sym = s
		}
		ret, err = Inject(ctx, pid, lib, sym, arg)
	case "seize":
		// PTRACE_SEIZE itself, without the checks before it: the kernel's
		// refusal and its explanation.
		var t *tracee
		t, _, _, err = seize(pid, pid, time.Now().Add(5*time.Second))
		if t != nil {
			_ = t.detach(0)
		}
	case "trace":
		// Hold pid traced until killed.
		if e := ptrace(unix.PTRACE_SEIZE, pid, 0, 0); e != nil {
			fmt.Println("error", e)
			return 1
		}
		fmt.Println("traced")
		select {}
	default:
		fmt.Println("error unknown role", role)
		return 2
	}
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("ok", ret)
	return 0
}

// runHelper runs the test binary as role over cmd's rewriting (user,
// namespace), returning its output line.
func runHelper(t *testing.T, role string, wrap func(*exec.Cmd), env []string, pid int, lib, arg string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", strconv.Itoa(pid), lib, arg)
	cmd.Env = append(append(os.Environ(), helperEnv+"="+role), env...)
	cmd.Dir = "/"
	if wrap != nil {
		wrap(cmd)
	}
	out, _ := cmd.CombinedOutput()
	return strings.TrimSpace(string(out))
}

// cc builds a C source of testdata into dir.
func cc(t *testing.T, dir, out, src string, flags ...string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", src))
	require.NoError(t, err)
	p := filepath.Join(dir, out)
	args := append([]string{"-O2", "-Wall", "-Wextra", "-Werror", "-o", p, abs}, flags...)
	b, err := exec.Command("cc", args...).CombinedOutput()
	require.NoError(t, err, "cc %v: %s", args, b)
	return p
}

// proc is a target process started by a test.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	pid   int
}

// start runs a target and waits for its first line (ready); the target is
// killed and reaped when the test ends.
func start(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd, lines: make(chan string, 64)}
	var err error
	p.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	p.pid = cmd.Process.Pid
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	require.Contains(t, p.line(t), "ready")
	return p
}

func (p *proc) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		require.True(t, ok, "the target's output ended")
		return l
	case <-time.After(60 * time.Second):
		t.Fatal("no line from the target within 60 s")
	}
	return ""
}

// waitSyscall waits until thread tid of pid is blocked in system call nr.
func waitSyscall(t *testing.T, pid, tid int, nr int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, _, ok := threadSyscall(pid, tid)
		return ok && n == nr
	}, 10*time.Second, time.Millisecond, "thread %d never blocked in system call %d", tid, nr)
}

// requireError requires err to be an *Error whose message holds want.
func requireError(t *testing.T, err error, pid int, want string) *Error {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "want an *inject.Error, got %v", err)
	require.Equal(t, pid, e.PID)
	require.Contains(t, e.Error(), want)
	require.NotEmpty(t, e.Fix)
	require.NotContains(t, e.Cause+e.Fix, "\n")
	require.True(t, strings.HasPrefix(e.Error(), fmt.Sprintf("cannot attach to PID %d: ", pid)), e.Error())
	return e
}

// tracerOf is the TracerPid of every thread of pid (0 when none is traced).
func tracerOf(t *testing.T, pid int) int {
	tids, err := tasks(pid)
	require.NoError(t, err)
	for _, tid := range tids {
		m, err := readStatus(procPath(pid, "task", strconv.Itoa(tid), "status"))
		require.NoError(t, err)
		if tp, _ := strconv.Atoi(m["TracerPid"]); tp != 0 {
			return tp
		}
	}
	return 0
}

func marker(t *testing.T, path string, pid int) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the injected function wrote no marker")
	require.Equal(t, fmt.Sprintf("marked %s pid=%d\n", path, pid), string(b))
}

func itoa(n int) string { return strconv.Itoa(n) }

func cmdOf(path string, args ...string) *exec.Cmd { return exec.Command(path, args...) }

// runOut runs a program to its end and returns its standard output.
func runOut(path string, args ...string) (string, error) {
	b, err := exec.Command(path, args...).Output()
	return string(b), err
}
