package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/attach"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// recordingAgentEnv makes this test binary a fake attach agent that
// records: it maps a file named like the HSA runtime (a GPU process), and
// when handed the configuration's path on stdin writes a spool of n
// iterations into the configuration's spool directory, reports ready,
// and answers "detach".
const recordingAgentEnv = "ROCPROF_GO_TEST_RECORDING_AGENT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(recordingAgentEnv); dir != "" {
		recordingAgent(dir)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lostEnv is how many dispatches the recording agent says it lost at
// the detach.
const lostEnv = "ROCPROF_GO_TEST_RECORDING_AGENT_LOST"

var lostDispatches = "0"

func recordingAgent(dir string) {
	if n := os.Getenv(lostEnv); n != "" {
		lostDispatches = n
	}
	p := filepath.Join(dir, "libhsa-runtime64.so.1")
	if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
		os.Exit(3)
	}
	f, err := os.Open(p)
	if err != nil {
		os.Exit(3)
	}
	if _, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE); err != nil {
		os.Exit(3)
	}
	fmt.Println("up")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		data, err := os.ReadFile(in.Text())
		if err != nil {
			os.Exit(4)
		}
		conf := map[string]string{}
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				conf[k] = v
			}
		}
		pid := os.Getpid()
		if _, err := rocpdtest.RunSpool(conf[toolenv.GoSpoolDir], int32(pid), 3); err != nil {
			os.Exit(5)
		}
		c, err := net.Dial("unix", conf[attach.SocketEnv])
		if err != nil {
			os.Exit(6)
		}
		fmt.Fprintf(c, "ready %d\n", pid)
		r := bufio.NewReader(c)
		if l, err := r.ReadString('\n'); err == nil && l == "detach\n" {
			fmt.Fprintf(c, "busy 1\ndispatches %d lost=%s in_flight_at_attach=1 running_at_detach=0 missed=%s\ndetached %d 23 %s\n",
				pid, lostDispatches, lostDispatches, pid, lostDispatches)
		}
		c.Close()
	}
}

type agentInjector struct {
	mu    sync.Mutex
	stdin map[int]io.Writer
}

func (a *agentInjector) Preflight(pid int, lib string) error { return nil }

func (a *agentInjector) Inject(ctx context.Context, pid int, lib, sym, arg string) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err := fmt.Fprintln(a.stdin[pid], arg)
	return 0, err
}

func (a *agentInjector) Descendants(pid int) ([]int, error) { return nil, nil }

// An attach's pass goes through the pipeline as a launched pass does: the
// spool the process recorded while attached is written (%pid% in the
// name), run.json holds the attach object (pids, window, slots restored,
// unloaded), the run directory and its attach files are gone.
func TestAttachPassWritesItsOutputsAndRunJSON(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	pid := startRecordingAgent(t, "0")
	out := t.TempDir()
	spools := t.TempDir()
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{
		Args: []string{"--attach", strconv.Itoa(pid), "--attach-duration-msec", "200", "--kernel-trace", "--hip-trace",
			"-f", "csv", "-d", out, "-o", "%pid%"},
		Environ:  append(os.Environ(), launch.SpoolRootEnv+"="+spools),
		Progress: &progress, Stdin: bytes.NewReader(nil),
	}, nil)
	require.NoError(t, err, progress.String())
	require.Equal(t, 0, res.ExitStatus)
	a := res.Manifest.Attach
	require.NotNil(t, a)
	require.Equal(t, pid, a.Target)
	require.Equal(t, []int{pid}, a.PIDs)
	require.Equal(t, "duration", a.DetachedOn)
	require.Len(t, a.Processes, 1)
	require.Equal(t, 23, a.Processes[0].SlotsRestored)
	require.True(t, a.Processes[0].Unloaded)
	require.False(t, a.WindowStart.IsZero())
	require.FileExists(t, filepath.Join(out, strconv.Itoa(pid)+"_kernel_trace.csv"))
	require.FileExists(t, filepath.Join(out, strconv.Itoa(pid)+"_hip_api_trace.csv"))
	require.Positive(t, res.Manifest.DomainRecords["KERNEL_DISPATCH"])

	// run.json as written.
	data, err := os.ReadFile(filepath.Join(out, ManifestName))
	require.NoError(t, err)
	var doc struct {
		Attach struct {
			Target    int   `json:"target"`
			PIDs      []int `json:"pids"`
			Processes []struct {
				PID           int     `json:"pid"`
				AttachMs      float64 `json:"attach_ms"`
				SlotsRestored int     `json:"slots_restored"`
				Unloaded      bool    `json:"unloaded"`
			} `json:"processes"`
			WindowStart time.Time `json:"window_start"`
			WindowEnd   time.Time `json:"window_end"`
		} `json:"attach"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Equal(t, pid, doc.Attach.Target)
	require.Equal(t, 23, doc.Attach.Processes[0].SlotsRestored)
	require.True(t, doc.Attach.WindowEnd.After(doc.Attach.WindowStart))
	left, _ := os.ReadDir(spools)
	require.Empty(t, left, "the run directory, its spools, attach.conf and attach.sock are removed")
}

// startRecordingAgent starts the recording agent (lost: the dispatches it
// says it lost at the detach) and makes it the pipeline's only process to
// inject.
func startRecordingAgent(t *testing.T, lost string) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), recordingAgentEnv+"="+t.TempDir(), lostEnv+"="+lost)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	up, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "up\n", up)
	pid := cmd.Process.Pid
	attachInjector = &agentInjector{stdin: map[int]io.Writer{pid: stdin}}
	t.Cleanup(func() { attachInjector = nil })
	return pid
}

// Kernel dispatches of the window an agent could not time are a loss:
// counted by class in run.json, named in the run's error, and the run fails
// (its outputs written all the same); those in flight at the attach are
// reported, not lost.
func TestAttachLostDispatchesFailTheRun(t *testing.T) {
	t.Setenv(launch.LibDirEnv, launchtest.FakeLibDir(t))
	pid := startRecordingAgent(t, "2")
	out := t.TempDir()
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{
		Args:     []string{"-p", strconv.Itoa(pid), "--attach-duration-msec", "100", "--kernel-trace", "-f", "csv", "-d", out},
		Environ:  append(os.Environ(), launch.SpoolRootEnv+"="+t.TempDir()),
		Progress: &progress, Stdin: bytes.NewReader(nil),
	}, nil)
	var lost *attach.DispatchesLostError
	require.ErrorAs(t, err, &lost, progress.String())
	require.Contains(t, err.Error(), fmt.Sprintf("2 kernel dispatches submitted while attached could not be timed (PID %d: 2 run by the device without the profiler's completion signal)", pid))
	require.Equal(t, uint64(2), res.Manifest.Attach.DispatchesLost())
	require.Contains(t, progress.String(), "note: at the window's edges 1 kernel dispatches were in flight when the attach began")
	m, err := LoadManifest(out)
	require.NoError(t, err)
	require.Equal(t, uint64(2), m.Attach.Processes[0].DispatchesLost)
	require.Equal(t, map[string]uint64{"missed": 2}, m.Attach.Processes[0].DispatchesLostWhy)
	require.Equal(t, uint64(1), m.Attach.Processes[0].InFlightAtAttach)
	csvs, err := filepath.Glob(filepath.Join(out, "*", "*_kernel_trace.csv"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(out, "*_kernel_trace.csv"))
	require.NoError(t, err)
	require.NotEmpty(t, append(csvs, more...), "the outputs are written all the same")
}
