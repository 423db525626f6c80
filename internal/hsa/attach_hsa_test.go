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
	"sync"
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
	l      net.Listener
	sock   net.Conn
	dir    string // the configuration, the socket, the spool directories
	conf   string
	spools string // the current attach's
	pid    int
	stderr *lockedBuffer
	wait   func() error
	// confVars are written into every configuration after kernel tracing.
	confVars []string
	sockR    *bufio.Reader // the current connection's lines
	// account is the last detach's "dispatches <pid> ..." line.
	account string
}

// writeConf points the configuration at a new spool directory (one per
// attach, as the CLI makes one per run) with kernel tracing.
func (a *attachedApp) writeConf(name string) {
	a.spools = filepath.Join(a.dir, name)
	require.NoError(a.t, os.Mkdir(a.spools, 0o700))
	require.NoError(a.t, os.WriteFile(a.conf, []byte(strings.Join(append([]string{
		toolenv.GoSpoolDir + "=" + a.spools,
		toolenv.KernelTrace + "=1",
		toolenv.GoAttachSocket + "=" + filepath.Join(a.dir, "s"),
	}, a.confVars...), "\n")+"\n"), 0o600))
}

// connected waits for the control thread of the attach the app just started
// and its "ready".
func (a *attachedApp) connected() {
	require.Equal(a.t, "attached 0", a.line(), "stderr: %s", a.stderr.String())
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := a.l.Accept()
		if err == nil {
			acc <- c
		}
	}()
	select {
	case a.sock = <-acc:
		a.sockR = bufio.NewReader(a.sock)
	case <-time.After(30 * time.Second):
		a.t.Fatalf("the control thread never connected; stderr: %s", a.stderr.String())
	}
	c := a.sock
	a.t.Cleanup(func() { c.Close() })
	require.Equal(a.t, fmt.Sprintf("ready %d", a.pid), a.sockLine(), "stderr: %s", a.stderr.String())
}

// detach asks for the detach and returns the lost count it reports.
func (a *attachedApp) detach() uint64 {
	_, err := io.WriteString(a.sock, "detach\n")
	require.NoError(a.t, err)
	var pid, restored int
	var lost uint64
	detached := a.sockLine()
	for !strings.HasPrefix(detached, "detached ") && !strings.HasPrefix(detached, "error") {
		if strings.HasPrefix(detached, "dispatches ") {
			a.account = detached
		}
		detached = a.sockLine() // reports before it (busy, dispatches)
	}
	a.t.Logf("%s; %s", a.account, detached)
	_, err = fmt.Sscanf(detached, "detached %d %d %d", &pid, &restored, &lost)
	require.NoError(a.t, err, "%q", detached)
	require.Equal(a.t, a.pid, pid, "%q", detached)
	return lost
}

// lockedBuffer collects a process's stderr; a test may read it while the
// process runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startAttached starts attach_hsa on rt with kernel tracing in the attach
// configuration, and returns once the control thread said "ready".
func startAttached(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime, vgpuVars ...string) *attachedApp {
	return startAttachedConf(t, ctx, rt, nil, vgpuVars...)
}

// startAttachedConf is startAttached with confVars ("NAME=VALUE") added to
// the attach configuration.
func startAttachedConf(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime, confVars []string, vgpuVars ...string) *attachedApp {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	a := &attachedApp{t: t, l: l, dir: dir, conf: filepath.Join(dir, "attach.conf"), stderr: &lockedBuffer{}, confVars: confVars}
	a.writeConf("spools")

	co := filepath.Join(rt.Apps, "module_kernels.co")
	cmd := rt.Command(ctx, artifact(t, "test/shim/attach_hsa"), co,
		artifact(t, "lib/librocprof-go-preload.so"), a.conf)
	cmd.Env = appEnv(t, a.spools, true, vgpuVars...) // no profiler in its environment
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	outp, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = a.stderr
	require.NoError(t, cmd.Start())
	a.in, a.out, a.pid = in, bufio.NewReader(outp), cmd.Process.Pid
	a.wait = func() error {
		err := cmd.Wait()
		if err != nil {
			return fmt.Errorf("%w; stderr: %s", err, a.stderr.String())
		}
		return nil
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = a.wait()
	})
	a.connected()
	return a
}

func (a *attachedApp) line() string {
	s, err := a.out.ReadString('\n')
	require.NoError(a.t, err, "app output so far: %q", s)
	return strings.TrimSuffix(s, "\n")
}

func (a *attachedApp) sockLine() string {
	require.NoError(a.t, a.sock.SetReadDeadline(time.Now().Add(30*time.Second)))
	s, err := a.sockR.ReadString('\n')
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
// clean exit, its queue and signals working after the detach, its queue's
// profiling bit given back. A second attach to the same process records its
// own window the same way.
func TestAttachRecordsDispatchesOfTheWindow(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
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
		// Two producers out of order: the second slot's doorbell first.
		a.do("swap", "swapped")
		lost := a.detach()
		// After the detach: the queue's profiling as the app left it, and
		// the app's own path, unrecorded.
		a.do("prof", "profiling 0")
		a.do("run 3 0", "ran 3")
		first := a.spools

		// Attached again once the library unloaded itself (as the CLI
		// waits for it to leave /proc/PID/maps): its own window,
		// numbered afresh, both code objects (loaded before it) named.
		require.Eventually(t, func() bool {
			maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", a.pid))
			return err == nil && !strings.Contains(string(maps), "librocprof-go-preload.so")
		}, 10*time.Second, 5*time.Millisecond, "the library stayed mapped after the detach")
		a.writeConf("spools2")
		_, err := io.WriteString(a.in, "attach\n")
		require.NoError(t, err)
		a.connected()
		a.do("run 5 0", "ran 5")
		a.do("prof", "profiling 1")
		lost2 := a.detach()
		a.do("prof", "profiling 0")
		a.do("run 2 0", "ran 2")
		a.do("quit", "bye")
		require.NoError(t, a.wait())

		rs2 := readSpools(t, a.spools)
		// A dispatch without times is counted lost, never recorded.
		require.Equal(t, 5, len(rs2.dispatches)+int(lost2), "the second attach: %+v", rs2.dispatches)
		require.Len(t, rs2.codeObjs, 2, "%+v", rs2.codeObjs)
		require.Len(t, rs2.symbols, 2, "%+v", rs2.symbols)
		require.NotEmpty(t, rs2.agents)
		timed2 := 0
		ids2 := map[uint64]bool{}
		for _, d := range rs2.dispatches {
			require.False(t, ids2[d.DispatchID], "%+v", d)
			require.True(t, d.DispatchID >= 1 && d.DispatchID <= 5, "%+v", d)
			ids2[d.DispatchID] = true
			require.Equal(t, "module_fill.kd", rs2.kernelName(d), "%+v", d)
			require.True(t, d.End > d.Start && d.Start > 0, "a dispatch recorded without times: %+v", d)
			timed2++
		}
		require.Equal(t, uint64(5-timed2), lost2)

		rs := readSpools(t, first)
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
		// 10 + 1 (the load's) + 4 + 1500 + 2 (swapped) dispatches, none
		// of grid 64 (before the attach) nor 3 more after the detach.
		const total = 1517
		swapped := 0
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
			// Every record has times (a dispatch without is only
			// counted lost): the runtime's system clock, as the
			// recorder's: after the attach, and the virtual GPU's
			// modelled duration (2 us and a little) at least.
			require.True(t, d.End > d.Start && d.Start > 0, "a dispatch recorded without times: %+v", d)
			require.Greater(t, d.Start, attachedAt, "%+v", d)
			require.GreaterOrEqual(t, d.End-d.Start, uint64(2000), "%+v", d)
			timed++
			if d.Grid[0] == 512 {
				swapped++
			}
			names[rs.kernelName(d)]++
			ids[d.DispatchID] = true
		}
		// A dispatch the virtual GPU took before its signal was ours has
		// no times: it is counted lost (attach_hsa.c), not recorded;
		// the detach says how many. Records and lost make the window.
		require.Equal(t, uint64(total-timed), lost, "timed %d of %d", timed, total)
		require.GreaterOrEqual(t, swapped+int(lost), 2, "the dispatch whose slot was written after the next's doorbell")
		for id := range ids {
			require.True(t, id >= 1 && id <= total, "dispatch id %d", id)
		}
		require.Len(t, ids, timed, "a dispatch id recorded twice")
		require.GreaterOrEqual(t, timed, total*9/10, "too few dispatches with times: %d of %d", timed, total)
		require.Equal(t, map[string]int{"module_fill.kd": timed}, names)
	})
}

// What the HSA side records while attached is what the shim records in
// launch mode, field for field: the same app run under LD_PRELOAD and
// HSA_TOOLS_LIB (where the attach is refused: -EALREADY, the process is
// profiled already) and attached gives the same agents and the same kernel
// symbols (sizes, register counts, entry offset), and the dispatches of the
// same kernels the same shapes and register counts.
func TestAttachRecordsAsTheShim(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		a := startAttached(t, ctx, rt)
		a.do("run 4 2", "ran 4")
		a.do("load", "loaded")
		a.detach()
		a.do("quit", "bye")
		require.NoError(t, a.wait())
		attached := readSpools(t, a.spools)

		launched := launchedAsShim(t, ctx, rt, a.conf, "run 4 2\nload\nquit\n", "ROCPROF_KERNEL_TRACE=1")

		require.NotEmpty(t, attached.agents)
		require.Len(t, attached.symbols, 2)
		require.Len(t, attached.dispatches, 5)
		require.Equal(t, len(launched.agents), len(attached.agents))
		for i := range launched.agents {
			require.Equal(t, launched.agents[i], attached.agents[i], "agent %d", i)
		}
		syms := func(rs records) map[string][]tracing.KernelSymbol {
			m := map[string][]tracing.KernelSymbol{}
			for _, s := range rs.symbols {
				s.KernelID, s.CodeObjectID, s.KernelObject = 0, 0, 0
				m[string(s.Name)] = append(m[string(s.Name)], s)
			}
			return m
		}
		require.Equal(t, syms(launched), syms(attached))
		require.Len(t, attached.codeObjs, len(launched.codeObjs))
		for i, c := range attached.codeObjs {
			l := launched.codeObjs[i]
			require.Equal(t, l.Operation, c.Operation)
			require.Equal(t, l.AgentNode, c.AgentNode)
			require.Equal(t, l.StorageType, c.StorageType)
			require.Equal(t, l.LoadSize, c.LoadSize)
		}
		shape := func(d tracing.KernelDispatch) string {
			return fmt.Sprintf("grid %v wg %v lds %d scratch %d regs %d/%d/%d node %d", d.Grid, d.Workgroup, d.GroupSegmentSize, d.PrivateSegmentSize,
				d.VGPRCount, d.AGPRCount, d.SGPRCount, d.AgentNode)
		}
		// The launched run has the 3 dispatches from before the attach
		// too (grid 64): the window's are compared.
		var want, got []string
		for _, d := range launched.dispatches {
			if d.Grid[0] != 64 {
				want = append(want, launched.kernelName(d)+" "+shape(d))
			}
		}
		for _, d := range attached.dispatches {
			got = append(got, attached.kernelName(d)+" "+shape(d))
		}
		require.ElementsMatch(t, want, got)
	})
}

// On a machine of two GPUs a queue made before the attach belongs to the GPU
// the app made it on, also where the runtime cannot say (hsa_amd_queue_get_info
// is ROCm 6.4's): its dispatches name the agent their kernel was loaded for,
// and have their times.
func TestAttachFindsTheAgentOfAnEarlierQueue(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		a := startAttached(t, ctx, rt, "ROCPROF_VGPU_COUNT=2")
		a.do("run 6 3", "ran 6")
		lost := a.detach()
		a.do("quit", "bye")
		require.NoError(t, a.wait())
		rs := readSpools(t, a.spools)
		var gpus []uint32
		for _, ag := range rs.agents {
			if ag.Type() == tracing.AgentGPU {
				gpus = append(gpus, uint32(ag.NodeID()))
			}
		}
		require.Len(t, gpus, 2, "%+v", rs.agents)
		require.Equal(t, 6, len(rs.dispatches)+int(lost), "%+v", rs.dispatches)
		timed := 0
		for _, d := range rs.dispatches {
			// attach_hsa's queue is on the first GPU it finds.
			require.Equal(t, gpus[0], d.AgentNode, "%+v", d)
			require.True(t, d.End > d.Start && d.Start > 0, "a dispatch recorded without times: %+v", d)
			timed++
		}
		require.Equal(t, uint64(6-timed), lost)
		require.GreaterOrEqual(t, timed, 5)
	})
}

// Work the app submitted before the agent saw its queue is the window's
// edge: a long kernel started while detached is, at the next attach, in
// flight (the queue is seen at the first reservation of the window):
// counted in the detach's account (in_flight_at_attach), neither recorded
// nor lost; the window's own dispatch, queued behind it, is recorded with
// its times.
func TestAttachCountsWorkInFlightAtTheAttach(t *testing.T) {
	attachOnEveryRuntime(t, func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime) {
		// module_fill of 4096 work-items runs ~1 s on the virtual GPU.
		a := startAttached(t, ctx, rt, "ROCPROF_VGPU_KERNEL_SCALE=*module_fill*@4096=400000")
		require.Equal(t, uint64(0), a.detach())
		require.Eventually(t, func() bool {
			maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", a.pid))
			return err == nil && !strings.Contains(string(maps), "librocprof-go-preload.so")
		}, 10*time.Second, 5*time.Millisecond, "the library stayed mapped after the detach")
		a.do("bg 1 4096", "started")
		a.writeConf("spools2")
		_, err := io.WriteString(a.in, "attach\n")
		require.NoError(t, err)
		a.connected()
		a.do("run 1 0", "ran 1")
		lost := a.detach()
		a.do("quit", "bye")
		require.NoError(t, a.wait())
		require.Equal(t, uint64(0), lost, "%s", a.account)
		require.Contains(t, a.account, " lost=0 in_flight_at_attach=1 running_at_detach=0")
		rs := readSpools(t, a.spools)
		require.Len(t, rs.dispatches, 1, "%+v", rs.dispatches)
		d := rs.dispatches[0]
		require.NotEqual(t, uint32(4096), d.Grid[0], "a dispatch from before the attach was recorded: %+v", d)
		require.True(t, d.End > d.Start && d.Start > 0, "a dispatch recorded without times: %+v", d)
	})
}

// A queue made and destroyed while attached is traced (its creation names
// its agent). A detach while kernels still run leaves the app's
// synchronisation alone: the first kernel, carrying our signal, is waited for
// past the stop's first bound because a later barrier packet of its queue is
// still running (so our signal is given back, not left to the runtime) and is
// recorded with its times; the second, carrying the app's signal, is not
// complete then: the window's edge (running_at_detach), not recorded, not
// lost; every dispatch of the new queue has its times; the app's
// wait on its own signal still ends when its kernel does, after the library
// is gone, and the queue works on.
func TestAttachNewQueuesAndKernelsInFlight(t *testing.T) {
	rts, err := rocmmatrix.Ready(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			// module_fill of 4096 work-items runs ~2.5 s on the virtual GPU.
			a := startAttached(t, ctx, rt, "ROCPROF_VGPU_KERNEL_SCALE=*module_fill*@4096=1000000")
			a.do("newq", "newq")
			a.do("start 2 4096", "started")
			lost := a.detach()
			a.do("wait", "waited")
			a.do("run 3 0", "ran 3")
			a.do("quit", "bye")
			require.NoError(t, a.wait())

			rs := readSpools(t, a.spools)
			gpu := map[uint32]bool{}
			for _, ag := range rs.agents {
				if ag.Type() == tracing.AgentGPU {
					gpu[uint32(ag.NodeID())] = true
				}
			}
			// Queue ids go by first sight: the new queue is seen first (at
			// its creation), the app's older one at the kernels it starts.
			var timedNew, inFlight int
			for _, d := range rs.dispatches {
				switch d.Grid[0] {
				case 1024:
					require.Equal(t, uint64(1), d.QueueID, "%+v", d)
					require.True(t, gpu[d.AgentNode], "%+v", d)
					require.True(t, d.End > d.Start && d.Start > 0, "a dispatch recorded without times: %+v", d)
					timedNew++
				case 4096:
					inFlight++
					require.Equal(t, uint64(2), d.QueueID, "%+v", d)
					require.Equal(t, uint32(3), d.PacketIndex, "the kernel with the app's signal, still running at the stop, was recorded: %+v", d)
					require.True(t, d.End > d.Start && d.Start > 0, "a dispatch recorded without times: %+v", d)
					// ~2.5 s on the virtual GPU (ROCPROF_VGPU_KERNEL_SCALE).
					require.Greater(t, d.End-d.Start, uint64(2e9), "%+v", d)
				default:
					t.Fatalf("a dispatch from outside the window: %+v", d)
				}
			}
			// The virtual GPU takes a packet only once its doorbell is
			// rung, after the hook put our signal in it: none is lost.
			require.Equal(t, 3, timedNew)
			require.Equal(t, 1, inFlight, "%+v", rs.dispatches)
			require.Equal(t, uint64(0), lost, "%s", a.account)
			require.Contains(t, a.account, " lost=0 in_flight_at_attach=0 running_at_detach=1")
		})
	}
}

// launchedAsShim runs attach_hsa launched under the shim (LD_PRELOAD, the
// environment vars), given the commands of input, and returns its
// records: what an attach of the same work is compared with. Its own
// attach is refused (-114: the library is loaded already).
func launchedAsShim(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime, conf, input string, vars ...string) records {
	t.Helper()
	spools := t.TempDir()
	cmd := rt.Command(ctx, artifact(t, "test/shim/attach_hsa"),
		filepath.Join(rt.Apps, "module_kernels.co"), artifact(t, "lib/librocprof-go-preload.so"), conf)
	cmd.Env = appEnv(t, spools, false, vars...)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "attached -114\n", "the attach under LD_PRELOAD: %s", out)
	return readSpools(t, spools)
}

// attachOnEveryRuntime runs f on every runtime of the matrix, each a
// subtest with 3 minutes for its attaches.
func attachOnEveryRuntime(t *testing.T, f func(t *testing.T, ctx context.Context, rt rocmmatrix.Runtime)) {
	t.Helper()
	rts, err := rocmmatrix.Ready(repoRoot(t), buildDir(t))
	require.NoError(t, err)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			f(t, ctx, rt)
		})
	}
}
