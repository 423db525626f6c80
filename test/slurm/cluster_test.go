package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// Bounds of the waits. The machine may be small (2 CPUs) and loaded by the
// other test packages: these catch hangs, they are not speed checks.
const (
	startTimeout   = 3 * time.Minute // munged up, the node idle in sinfo
	commandTimeout = 8 * time.Minute // one srun or sbatch --wait
	stopTimeout    = time.Minute     // the jobs gone, a daemon exited
	// deadlineMargin is kept before the test binary's -timeout (a quarter
	// of the time left, if less), so that a hung command fails the test
	// and t.Cleanup still stops the cluster (a test binary that panics at
	// its timeout would leave the job steps running).
	deadlineMargin = 3 * time.Minute
)

// tools are the programs the tests run, with the package that has them.
var tools = []struct{ name, pkg string }{
	{"munged", "munge"}, {"mungekey", "munge"}, {"munge", "munge"},
	{"slurmctld", "slurm-wlm"}, {"slurmd", "slurm-wlm"}, {"srun", "slurm-wlm"}, {"sbatch", "slurm-wlm"},
	{"sinfo", "slurm-wlm"}, {"squeue", "slurm-wlm"}, {"scancel", "slurm-wlm"},
	{"mpirun", "openmpi-bin"},
}

// cluster is a running one-node Slurm cluster private to one test.
type cluster struct {
	t       *testing.T
	dir     string // everything of the cluster: configuration, state, logs, the work directory
	conf    string // its slurm.conf (SLURM_CONF)
	node    string // the node's name (this machine's short host name)
	work    string // the jobs' working directory: build -> the build directory
	spools  string // ROCPROF_GO_SPOOL_ROOT of the runs: a kept run directory lands here
	env     []string
	daemons []*daemon
	ctx     context.Context // ends deadlineMargin before the test binary's deadline
	// attempts is how many times slurmctld and slurmd were started
	// (startClusterWith).
	attempts int
}

// daemon is one of the cluster's processes, started by the test.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when it exited
	err  error
}

// startCluster starts munged, slurmctld and slurmd and returns when sinfo
// shows the node idle. The cluster is stopped and its directory removed
// when the test ends.
func startCluster(t *testing.T) *cluster { return startClusterWith(t, false) }

// startClusterWith is startCluster; with takeFirstPort, the test itself
// listens on slurmctld's first port while it starts, as another process
// could, so that the cluster has to start again on other ports.
func startClusterWith(t *testing.T, takeFirstPort bool) *cluster {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "the Slurm tests run slurmctld, slurmd and munged as root, as CI does: run them as root")
	for _, tool := range tools {
		_, err := exec.LookPath(tool.name)
		require.NoError(t, err, "%s is missing: run `make deps` (it installs the Makefile's APT_TEST_PACKAGES, %s among them)", tool.name, tool.pkg)
	}
	cli := testsys.Artifact(t, "rocprof-go")
	for _, app := range []string{"tiny_kernels", "fault_exit", "fault_progress"} {
		testsys.Artifact(t, filepath.Join("testdata", app))
	}

	// The munge socket's path must stay short (a socket path has at most
	// 107 bytes): a directory of our own in TMPDIR, not t.TempDir's.
	dir, err := os.MkdirTemp("", "rpg-slurm-")
	require.NoError(t, err)
	// munged wants the socket's directory searchable by everyone.
	require.NoError(t, os.Chmod(dir, 0o755))
	c := &cluster{t: t, dir: dir, conf: filepath.Join(dir, "slurm.conf"), work: filepath.Join(dir, "work"),
		spools: filepath.Join(dir, "spools")}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if d, ok := t.Deadline(); ok {
		margin := min(deadlineMargin, time.Until(d)/4)
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-margin))
	}
	c.ctx = ctx
	t.Cleanup(func() {
		c.stop()
		cancel()
	})
	for _, d := range []string{"state", "spool", "munge", "work", "spools"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.Symlink(testsys.BuildDir(t), filepath.Join(c.work, "build")))

	host, err := os.Hostname()
	require.NoError(t, err)
	c.node, _, _ = strings.Cut(host, ".")

	// The environment of every command and so of every job (sbatch and
	// srun export it): this cluster's configuration, rocprof-go first in
	// PATH, none of the variables of a launcher this test may itself run
	// under.
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if launcherVar(name) || name == "PATH" || name == "ROCPROF_GO_SPOOL_ROOT" {
			continue
		}
		c.env = append(c.env, kv)
	}
	c.env = append(c.env, "SLURM_CONF="+c.conf, "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"),
		"ROCPROF_GO_SPOOL_ROOT="+c.spools)

	// munge: a key of our own, munged on a socket of our own.
	key := filepath.Join(dir, "munge", "munge.key")
	socket := filepath.Join(dir, "munge", "munge.socket")
	out, err := exec.Command("mungekey", "--create", "--keyfile="+key).CombinedOutput()
	require.NoError(t, err, "mungekey: %s", out)
	c.start("munged", "munged", "--foreground", "--force", "--socket="+socket, "--key-file="+key,
		"--pid-file="+filepath.Join(dir, "munge", "munged.pid"), "--seed-file="+filepath.Join(dir, "munge", "munged.seed"),
		"--log-file="+filepath.Join(dir, "munged.log"))
	c.poll("munged to answer on "+socket, func() (bool, string) {
		out, err := exec.Command("sh", "-c", `munge -n -S "$1" | unmunge -S "$1"`, "sh", socket).CombinedOutput()
		return err == nil, string(out)
	})

	// The node as slurmd sees this machine: CPUs, sockets, cores,
	// threads, memory.
	out, err = exec.Command("slurmd", "-C").Output()
	require.NoError(t, err, "slurmd -C: %s", out)
	hw, _, _ := strings.Cut(string(out), "\n")
	_, hw, ok := strings.Cut(hw, " ")
	require.True(t, ok && strings.Contains(hw, "CPUs="), "slurmd -C printed %q", out)
	// slurmctld and slurmd bind their ports when they start, a moment after
	// the ports were found free: should another process have taken one in
	// between, they exit with "Address already in use", and the cluster
	// starts again on other ports.
	for attempt := 1; ; attempt++ {
		c.attempts = attempt
		ctlPort, nodePort := freePorts(t)
		var taken net.Listener
		if takeFirstPort && attempt == 1 {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ctlPort)))
			require.NoError(t, err)
			taken = l
		}
		conf := fmt.Sprintf(`# A one-node cluster of test/slurm (rocprof-go), all of it in %[1]s.
ClusterName=rpgtest
SlurmctldHost=%[2]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[5]s
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmctldLogFile=%[1]s/slurmctld.log
SlurmdLogFile=%[1]s/slurmd.log
PlugStackConfig=%[1]s/plugstack.conf
MailProg=/bin/true
# No cgroup: containers have no writable cgroup hierarchy.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmctldDebug=info
SlurmdDebug=info
NodeName=%[2]s NodeAddr=127.0.0.1 %[6]s State=UNKNOWN
PartitionName=test Nodes=%[2]s Default=YES MaxTime=INFINITE State=UP
`, dir, c.node, ctlPort, nodePort, socket, strings.TrimSpace(hw))
		require.NoError(t, os.WriteFile(c.conf, []byte(conf), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "plugstack.conf"), nil, 0o644))
		first := len(c.daemons)
		c.start("slurmctld", "slurmctld", "-D")
		c.start("slurmd", "slurmd", "-D", "-N", c.node)
		exited, last := c.wait("the node to be idle in sinfo", func() (bool, string) {
			out, err := c.output("sinfo", "-h", "-N", "-o", "%N %T")
			return err == nil && strings.TrimSpace(out) == c.node+" idle", out
		})
		if taken != nil {
			taken.Close()
		}
		if exited == nil {
			return c
		}
		log := tail(exited.log, 40)
		if attempt == 3 || !strings.Contains(log, "Address already in use") {
			require.FailNow(t, "daemon exited", "%s exited (%v) while waiting for the node to be idle in sinfo (last: %s):\n%s",
				exited.name, exited.err, last, log)
		}
		t.Logf("attempt %d: %s could not bind its port (ports %d, %d): starting the cluster on others", attempt, exited.name, ctlPort, nodePort)
		c.stopDaemons(c.daemons[first:])
		c.daemons = c.daemons[:first]
	}
}

// launcherVar reports whether an environment variable is one a launcher
// sets (the rank table of docs/mpi.md and what Slurm and Open MPI export).
func launcherVar(name string) bool {
	for _, p := range []string{"SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "OMPI_", "PMIX_", "PMI_", "MV2_", "MPI_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// freePorts returns two TCP ports nothing listens on now, below the
// kernel's ephemeral range (net.ipv4.ip_local_port_range): a port from that
// range may be given to any process's outgoing connection (mpirun's, another
// test package's) before the daemon binds it.
func freePorts(t *testing.T) (int, int) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 2048 {
				low = v
			}
		}
	}
	from := max(1024, low-16384)
	var ports []int
	for len(ports) < 2 {
		p := from + rand.IntN(low-from)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil || (len(ports) == 1 && ports[0] == p) {
			continue
		}
		l.Close()
		ports = append(ports, p)
	}
	return ports[0], ports[1]
}

// stopDaemons stops daemons with SIGTERM (SIGKILL after stopTimeout), the
// last started first: slurmd first (it ends its steps), munged last (the
// others talk to it).
func (c *cluster) stopDaemons(ds []*daemon) {
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(stopTimeout):
			c.t.Errorf("%s did not exit within %s of SIGTERM: killed", d.name, stopTimeout)
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	}
}

// start starts a daemon in the foreground, its output in DIR/NAME.out.
func (c *cluster) start(name string, argv ...string) {
	c.t.Helper()
	log := filepath.Join(c.dir, name+".out")
	f, err := os.Create(log)
	require.NoError(c.t, err)
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group; killed with the test binary, should that die.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(c.t, cmd.Start(), "starting %s", name)
	d := &daemon{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	c.daemons = append(c.daemons, d)
}

// poll calls ready until it says yes, failing the test with its last
// output after startTimeout, or at once when a daemon exited.
func (c *cluster) poll(what string, ready func() (bool, string)) {
	c.t.Helper()
	if d, _ := c.wait(what, ready); d != nil {
		require.FailNow(c.t, "daemon exited", "%s exited (%v) while waiting for %s:\n%s", d.name, d.err, what, tail(d.log, 40))
	}
}

// wait calls ready until it says yes (nil) or a daemon exited (that
// daemon, and ready's last output), failing the test after startTimeout.
func (c *cluster) wait(what string, ready func() (bool, string)) (*daemon, string) {
	c.t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		ok, out := ready()
		if ok {
			return nil, out
		}
		for _, d := range c.daemons {
			select {
			case <-d.done:
				return d, out
			default:
			}
		}
		require.True(c.t, time.Now().Before(deadline) && c.ctx.Err() == nil,
			"waited %s for %s; last: %s", startTimeout, what, out)
		time.Sleep(200 * time.Millisecond)
	}
}

// output runs a client command (sinfo, squeue, ...) of this cluster.
func (c *cluster) output(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(c.ctx, stopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env
	cmd.Dir = c.work
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// result is how a shell command line ended.
type result struct {
	exit           int
	stdout, stderr string
	duration       time.Duration
}

// sh runs a command line with bash in the work directory, in the
// cluster's environment, to its end (bounded by commandTimeout and the
// test's deadline).
func (c *cluster) sh(line string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Env = c.env
	cmd.Dir = c.work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := result{stdout: out.String(), stderr: errb.String(), duration: time.Since(start)}
	require.NoError(c.t, ctx.Err(), "%s did not finish: stdout:\n%s\nstderr:\n%s", line, res.stdout, res.stderr)
	if err != nil {
		var ee *exec.ExitError
		require.True(c.t, errors.As(err, &ee), "running %s: %v", line, err)
		res.exit = ee.ExitCode()
	}
	return res
}

// stop cancels the jobs, stops the daemons (SIGTERM, then SIGKILL), kills
// every process left that carries this cluster's SLURM_CONF (a step's
// slurmstepd, its tasks), and removes the cluster's directory. A process
// it cannot get rid of fails the test.
func (c *cluster) stop() {
	t := c.t
	// The test is over, its deadline too: the stop has bounds of its own.
	c.ctx = context.Background()
	if t.Failed() {
		t.Logf("the cluster's logs (%s):\n%s", c.dir, c.logs())
	}
	if c.daemonsRunning() == len(c.daemons) && len(c.daemons) == 3 {
		if out, err := c.output("scancel", "--user=root"); err != nil {
			t.Logf("scancel: %v: %s", err, out)
		}
		deadline := time.Now().Add(stopTimeout)
		for time.Now().Before(deadline) {
			out, err := c.output("squeue", "-h", "-o", "%i %T")
			if err != nil || strings.TrimSpace(out) == "" {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	c.stopDaemons(c.daemons)
	var left []string
	for try := 0; try < 50; try++ {
		left = c.leftovers()
		if len(left) == 0 {
			break
		}
		for _, p := range left {
			pid, _ := strconv.Atoi(strings.Fields(p)[0])
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("processes of the cluster survive SIGKILL: %v", left)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		t.Errorf("removing the cluster's directory: %v", err)
	}
}

func (c *cluster) daemonsRunning() int {
	n := 0
	for _, d := range c.daemons {
		select {
		case <-d.done:
		default:
			n++
		}
	}
	return n
}

// leftovers are the processes (but this one) whose environment holds this
// cluster's SLURM_CONF, as "pid command".
func (c *cluster) leftovers() []string {
	mark := []byte("SLURM_CONF=" + c.conf + "\x00")
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var left []string
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(env, mark) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		left = append(left, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '})))
	}
	return left
}

// logs are the tails of the daemons' logs.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, n := range []string{"munged.out", "slurmctld.log", "slurmd.log"} {
		fmt.Fprintf(&b, "--- %s\n%s", n, tail(filepath.Join(c.dir, n), 40))
	}
	return b.String()
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error() + "\n"
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}
