package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/toolenv"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// attachedApp is testdata/attach_hsa started plainly on the virtual GPU,
// after it attached the preload library to itself (rpg_attach_start, what
// the CLI's injection makes a process call): its stdin and stdout, and the
// control thread's socket.
type attachedApp struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	sock   net.Conn
	spools string
	wait   func() error
}

// startAttached starts attach_hsa on rt with kernel tracing in the attach
// configuration, and returns once the control thread said "ready".
func startAttached(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) *attachedApp {
	dir := t.TempDir()
	spools := filepath.Join(dir, "spools")
	require.NoError(t, os.Mkdir(spools, 0o700))
	sockPath := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sockPath)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	conf := filepath.Join(dir, "attach.conf")
	require.NoError(t, os.WriteFile(conf, []byte(strings.Join([]string{
		toolenv.GoSpoolDir + "=" + spools,
		toolenv.KernelTrace + "=1",
		toolenv.GoAttachSocket + "=" + sockPath,
	}, "\n")+"\n"), 0o600))

	co := filepath.Join(rt.Apps, "module_kernels.co")
	cmd := rt.Command(ctx, artifact(t, "test/shim/attach_hsa"), co,
		artifact(t, "lib/librocprof-go-preload.so"), conf)
	cmd.Env = appEnv(t, spools, true) // no profiler in its environment
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	outp, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	a := &attachedApp{t: t, in: in, out: bufio.NewReader(outp), spools: spools}
	a.wait = func() error {
		err := cmd.Wait()
		if err != nil {
			return fmt.Errorf("%w; stderr: %s", err, stderr.String())
		}
		return nil
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = a.wait()
	})
	require.Equal(t, "attached 0", a.line(), "stderr: %s", stderr.String())
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			acc <- c
		}
	}()
	select {
	case a.sock = <-acc:
	case <-time.After(30 * time.Second):
		t.Fatalf("the control thread never connected; stderr: %s", stderr.String())
	}
	t.Cleanup(func() { a.sock.Close() })
	ready := a.sockLine()
	require.Equal(t, fmt.Sprintf("ready %d", cmd.Process.Pid), ready, "stderr: %s", stderr.String())
	return a
}

func (a *attachedApp) line() string {
	s, err := a.out.ReadString('\n')
	require.NoError(a.t, err, "app output so far: %q", s)
	return strings.TrimSuffix(s, "\n")
}

func (a *attachedApp) sockLine() string {
	require.NoError(a.t, a.sock.SetReadDeadline(time.Now().Add(30*time.Second)))
	r := bufio.NewReader(a.sock)
	s, err := r.ReadString('\n')
	require.NoError(a.t, err, "socket so far: %q", s)
	return strings.TrimSuffix(s, "\n")
}

// do sends one command and checks the app's answer.
func (a *attachedApp) do(cmd, want string) {
	_, err := io.WriteString(a.in, cmd+"\n")
	require.NoError(a.t, err)
	require.Equal(a.t, want, a.line())
}

// The HSA side of an attach (attach_hsa.c) on every runtime of the matrix:
// an app that created its queue, loaded its kernel and dispatched before the
// attach gets, for the attached window only, one dispatch record per kernel
// it dispatched, each with its times from the runtime's profiling, its
// kernel named (the code object loaded before the attach and the one loaded
// while attached), its queue and agent; the agents are recorded; nothing
// dispatched before the attach or after the detach is; the app runs on to a
// clean exit, its queue and signals working after the detach.
func TestAttachRecordsDispatchesOfTheWindow(t *testing.T) {
	rts, err := rocmmatrix.Ready(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			a := startAttached(t, ctx, rt)
			// 10 kernels, every 5th with the app's completion signal (the
			// others get one of ours), then a code object loaded while
			// attached and 4 kernels of it (the last with the app's signal).
			a.do("run 10 5", "ran 10")
			// Profiling switched on at the queue's first reservation seen.
			a.do("prof", "profiling 1")
			a.do("load", "loaded")
			a.do("run 4 0", "ran 4")
			// A burst past the queue's 1024 slots without waiting (the last
			// waited): the ring wraps under the doorbell hook.
			a.do("run 1500 0", "ran 1500")
			_, err := io.WriteString(a.sock, "detach\n")
			require.NoError(t, err)
			var pid, restored int
			var lost uint64
			detached := a.sockLine()
			_, err = fmt.Sscanf(detached, "detached %d %d %d", &pid, &restored, &lost)
			require.NoError(t, err, "%q", detached)
			// After the detach: the queue's profiling as the app left it, and
			// the app's own path, unrecorded.
			a.do("prof", "profiling 0")
			a.do("run 3 0", "ran 3")
			a.do("quit", "bye")
			require.NoError(t, a.wait())

			rs := readSpools(t, a.spools)
			require.NotEmpty(t, rs.agents, "no agent recorded")
			gpus := map[uint32]bool{}
			for _, ag := range rs.agents {
				if ag.Type() == tracing.AgentGPU {
					gpus[uint32(ag.NodeID())] = true
				}
			}
			require.NotEmpty(t, gpus, "no GPU agent among %+v", rs.agents)
			// Two code objects: the one loaded before the attach (recorded at
			// the attach), the one loaded while attached; a kernel symbol each.
			require.Len(t, rs.codeObjs, 2, "%+v", rs.codeObjs)
			require.Len(t, rs.symbols, 2, "%+v", rs.symbols)
			attachedAt := rs.codeObjs[0].Timestamp
			// 10 + 1 (the load's) + 4 + 1500 dispatches, none of grid 64
			// (before the attach) nor 3 more after the detach.
			const total = 1515
			var timed int
			names := map[string]int{}
			ids := map[uint64]bool{}
			for _, d := range rs.dispatches {
				require.NotEqual(t, uint32(64), d.Grid[0], "a dispatch from before the attach was recorded: %+v", d)
				require.True(t, gpus[d.AgentNode], "dispatch on node %d, not a GPU agent: %+v", d.AgentNode, d)
				require.Equal(t, uint64(1), d.QueueID, "%+v", d)
				require.NotZero(t, d.CorrelationID, "%+v", d)
				require.NotZero(t, d.TID, "%+v", d)
				require.NotZero(t, d.VGPRCount, "no register counts from the descriptor: %+v", d)
				if d.End > d.Start && d.Start > 0 {
					// The runtime's system clock, as the recorder's: after
					// the attach, and the virtual GPU's modelled duration
					// (2 us and a little) at least.
					require.Greater(t, d.Start, attachedAt, "%+v", d)
					require.GreaterOrEqual(t, d.End-d.Start, uint64(2000), "%+v", d)
					timed++
				}
				names[rs.kernelName(d)]++
				ids[d.DispatchID] = true
			}
			require.Len(t, rs.dispatches, total)
			for i := uint64(1); i <= total; i++ {
				require.True(t, ids[i], "dispatch id %d missing", i)
			}
			// A dispatch the virtual GPU took before its signal was ours has
			// no times and is counted lost (attach_hsa.c); the detach says
			// how many. None was in 2200 of a burst on each runtime.
			require.Equal(t, uint64(total-timed), lost, "timed %d of %d, the detach said %q", timed, total, detached)
			require.GreaterOrEqual(t, timed, total*9/10, "too few dispatches with times: %d of %d", timed, total)
			require.Equal(t, map[string]int{"module_fill.kd": total}, names)
		})
	}
}
