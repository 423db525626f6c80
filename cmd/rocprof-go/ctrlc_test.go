package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: its master and its slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// Ctrl-C in a terminal reaches the foreground process group: rocprof-go and
// the app it started. An app that left that group (setsid, setpgid: a
// launcher that daemonises) got nothing before, and rocprof-go, which
// leaves the terminal's SIGINT to the group, ignored it: the run went on.
// Now rocprof-go forwards it to the app's processes outside its group.
func TestCtrlCReachesAnAppThatLeftTheProcessGroup(t *testing.T) {
	master, slave := openPTY(t)
	cmd := exec.Command(cliBinary, "-d", t.TempDir(), "--", "setsid", "sh", "-c", "echo ready; exec sleep 60")
	cmd.Dir = t.TempDir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// rocprof-go leads a new session whose controlling terminal is the
	// pty: its process group is the terminal's foreground, as in a shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	slave.Close()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	out := make(chan string, 100)
	go func() {
		r := bufio.NewReader(master)
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				out <- l
			}
			if err != nil {
				close(out)
				return
			}
		}
	}()
	var seen strings.Builder
	for ready := false; !ready; {
		select {
		case l, ok := <-out:
			require.True(t, ok, "output ended before the app was ready:\n%s", seen.String())
			seen.WriteString(l)
			ready = strings.TrimSpace(l) == "ready"
		case <-time.After(60 * time.Second):
			require.FailNow(t, "the app did not start", seen.String())
		}
	}
	time.Sleep(200 * time.Millisecond) // the shell has exec'd sleep
	_, err := master.Write([]byte{3})  // Ctrl-C, as typed
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		require.Equal(t, 130, ee.ExitCode(), "the app died of SIGINT; output:\n%s", seen.String())
	case <-time.After(20 * time.Second):
		require.FailNow(t, "Ctrl-C did not stop the app", "it left rocprof-go's process group and got no SIGINT")
	}
}
