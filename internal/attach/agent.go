package attach

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// The files of an attach in the run's private directory
// (launch.AttachFiles lists the same names).
const (
	confName   = "attach.conf"
	socketName = "attach.sock"
)

// SocketEnv is the configuration's variable naming the socket.
const SocketEnv = toolenv.GoAttachSocket

// maxLine bounds a line of the protocol.
const maxLine = 4096

// EncodeConf renders the configuration file: NAME=VALUE lines, sorted. A
// value holding a newline cannot be a line: refused.
func EncodeConf(env map[string]string) ([]byte, error) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := env[k]
		if strings.ContainsAny(k, "=\n\x00") || strings.ContainsAny(v, "\n\x00") {
			return nil, fmt.Errorf("the attach configuration cannot carry %s: its value holds a line break; attaching takes one line per variable", k)
		}
		b.WriteString(k + "=" + v + "\n")
	}
	return []byte(b.String()), nil
}

// listen writes the configuration and opens the socket in the run's
// private directory.
func (a *attacher) listen() error {
	a.sock = filepath.Join(a.o.Dir, socketName)
	if len(a.sock) >= len(unix.RawSockaddrUnix{}.Path) {
		return fmt.Errorf("the attach socket's path %s is longer than a unix socket's %d bytes: set ROCPROF_GO_SPOOL_ROOT to a shorter directory", a.sock, len(unix.RawSockaddrUnix{}.Path)-1)
	}
	old := unix.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: a.sock, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return fmt.Errorf("cannot listen on the attach socket %s: %w", a.sock, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(a.sock, 0o600); err != nil {
		ln.Close()
		return err
	}
	a.ln = ln
	env := make(map[string]string, len(a.o.Env)+1)
	for k, v := range a.o.Env {
		env[k] = v
	}
	env[SocketEnv] = a.sock
	data, err := EncodeConf(env)
	if err == nil {
		a.conf, err = a.o.WriteFile(confName, data)
	}
	if err != nil {
		ln.Close()
		return fmt.Errorf("cannot write the attach configuration in %s: %w", a.o.Dir, err)
	}
	go a.accept()
	return nil
}

// close stops listening and removes the configuration; the agents still
// connected see EOF and detach by themselves.
func (a *attacher) close() {
	a.ln.Close()
	if a.conf != "" {
		os.Remove(a.conf)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.procs {
		if p.conn != nil {
			p.conn.Close()
		}
	}
}

// accept takes the agents' connections: each says "ready <pid>" or
// "error <text>" first, from the process it names (the socket's peer
// credentials must match), which must be one being attached.
func (a *attacher) accept() {
	for {
		c, err := a.ln.AcceptUnix()
		if err != nil {
			return
		}
		go a.register(c)
	}
}

func (a *attacher) register(c *net.UnixConn) {
	peer := peerPID(c)
	_ = c.SetReadDeadline(time.Now().Add(a.o.ReadyTimeout))
	r := bufio.NewReaderSize(c, maxLine)
	line, err := readLine(r)
	if err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	reg := registration{conn: c}
	pid := peer
	switch word, rest, _ := strings.Cut(line, " "); word {
	case "ready":
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || (peer > 0 && n != peer) {
			c.Close()
			return
		}
		pid, reg.ready = n, true
	case "error":
		reg.text = rest
	default:
		c.Close()
		return
	}
	a.mu.Lock()
	p := a.procs[pid]
	a.mu.Unlock()
	if p == nil || pid <= 0 {
		c.Close() // no process of ours: nobody else can reach the socket, but a stale agent could
		return
	}
	if reg.ready {
		reg.lines = make(chan string, 4)
		go func() {
			defer close(reg.lines)
			for {
				l, err := readLine(r)
				if err != nil {
					return
				}
				reg.lines <- l
			}
		}()
	}
	select {
	case p.registered <- reg:
	default:
		c.Close()
	}
}

// readLine reads one protocol line without its newline.
func readLine(r *bufio.Reader) (string, error) {
	l, err := r.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(l), "\r\n"), nil
}

// peerPID is the pid of the process at the other end of c (0 if unknown).
func peerPID(c *net.UnixConn) int {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// attachOne injects pid and waits for its agent's "ready".
func (a *attacher) attachOne(ctx context.Context, pid, parent int) error {
	begin := time.Now()
	if err := a.o.Injector.Preflight(pid, a.o.Lib); err != nil {
		return err
	}
	p := &agentProc{pid: pid, parent: parent, registered: make(chan registration, 1)}
	a.mu.Lock()
	a.procs[pid] = p
	a.mu.Unlock()
	forget := func() {
		a.mu.Lock()
		delete(a.procs, pid)
		a.mu.Unlock()
	}
	ret, err := a.o.Injector.Inject(ctx, pid, a.o.Lib, StartSymbol, a.conf)
	if err != nil {
		forget()
		return err
	}
	switch {
	case ret == errAlready:
		forget()
		return &AlreadyProfiledError{PID: pid}
	case ret == -int(syscall.EBUSY):
		forget()
		return fmt.Errorf("cannot attach to PID %d: it still holds rocprof-go's library from an earlier attach, kept inert because a thread stayed inside a traced call at that detach: attach again once that call has returned", pid)
	case ret < 0:
		forget()
		return fmt.Errorf("cannot attach to PID %d: the preload library refused to start in it (%s): it left the process as it was; see the process's stderr", pid, unix.ErrnoName(syscall.Errno(-ret)))
	}
	timer := time.NewTimer(a.o.ReadyTimeout)
	defer timer.Stop()
	var reg registration
	select {
	case reg = <-p.registered:
	case <-timer.C:
		forget()
		if !alive(pid) {
			return fmt.Errorf("cannot attach to PID %d: the process exited during the attach", pid)
		}
		return fmt.Errorf("cannot attach to PID %d: its preload library did not report ready within %s: it detaches by itself once it finds rocprof-go gone; see the process's stderr", pid, a.o.ReadyTimeout)
	}
	if !reg.ready {
		reg.conn.Close()
		forget()
		return fmt.Errorf("cannot attach to PID %d: %s", pid, reg.text)
	}
	p.conn, p.lines = reg.conn, reg.lines
	p.rep = &Process{PID: pid, Parent: parent, AttachMs: ms(time.Since(begin))}
	a.mu.Lock()
	a.order = append(a.order, pid)
	a.report.PIDs = append(a.report.PIDs, pid)
	a.mu.Unlock()
	return nil
}

// attachDescendants attaches every descendant of the target not seen yet
// (breadth first). One that cannot be attached is skipped with a note.
func (a *attacher) attachDescendants(ctx context.Context) {
	kids, err := a.o.Injector.Descendants(a.o.PID)
	if err != nil {
		return
	}
	// The new ones are attached together (a worker pool's processes
	// each wait for their agent's "ready"), at most maxParallel at once.
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallel)
	for _, pid := range kids {
		a.mu.Lock()
		_, seen := a.procs[pid]
		skipped := a.said["skip "+strconv.Itoa(pid)]
		a.mu.Unlock()
		if seen || skipped {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(pid int) {
			defer func() { <-sem; wg.Done() }()
			err := a.attachOne(ctx, pid, parentOf(pid))
			if err == nil {
				return
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			a.said["skip "+strconv.Itoa(pid)] = true
			if !alive(pid) {
				return // a short-lived child: nothing to profile
			}
			a.report.Skipped = append(a.report.Skipped, Skipped{PID: pid, Reason: err.Error()})
			fmt.Fprintf(a.out, "rocprof-go: note: descendant PID %d is not profiled: %v\n", pid, err)
		}(pid)
	}
	wg.Wait()
}

// maxParallel bounds the descendants attached at once.
const maxParallel = 8

// allGone reports whether every attached process ended while attached.
func (a *attacher) allGone() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.order) == 0 {
		return false
	}
	for _, pid := range a.order {
		p := a.procs[pid]
		if p.rep.Exited {
			continue
		}
		if alive(pid) {
			return false
		}
		p.rep.Exited = true
	}
	return true
}

// detachAll detaches every attached process, all at once, each bounded.
func (a *attacher) detachAll() {
	a.mu.Lock()
	procs := make([]*agentProc, 0, len(a.order))
	for _, pid := range a.order {
		procs = append(procs, a.procs[pid])
	}
	a.mu.Unlock()
	done := make(chan struct{}, len(procs))
	for _, p := range procs {
		go func(p *agentProc) {
			a.detach(p)
			done <- struct{}{}
		}(p)
	}
	for range procs {
		<-done
	}
	for _, p := range procs {
		a.report.Processes = append(a.report.Processes, *p.rep)
		if p.rep.Problem != "" {
			fmt.Fprintf(a.out, "rocprof-go: warning: PID %d: %s\n", p.pid, p.rep.Problem)
		}
	}
}

// detach asks one agent to detach and checks it did.
func (a *attacher) detach(p *agentProc) {
	rep := p.rep
	if rep.Exited || !alive(p.pid) {
		rep.Exited, rep.Unloaded = true, true
		return
	}
	begin := time.Now()
	_ = p.conn.SetWriteDeadline(time.Now().Add(a.o.DetachTimeout))
	if _, err := p.conn.Write([]byte("detach\n")); err != nil && !alive(p.pid) {
		rep.Exited, rep.Unloaded = true, true
		return
	}
	timer := time.NewTimer(a.o.DetachTimeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				// EOF before "detached": the process ended (its spool
				// is complete up to there) or the agent gave up.
				if !alive(p.pid) {
					rep.Exited, rep.Unloaded = true, true
					return
				}
				rep.Problem = "its agent closed the connection without reporting the detach"
				rep.Unloaded = a.waitUnmapped(p.pid)
				return
			}
			if pid, acc, ok := parseAccount(l, "dispatches"); ok && pid == p.pid {
				rep.InFlightAtAttach, rep.RunningAtDetach = acc["in_flight_at_attach"], acc["running_at_detach"]
				delete(acc, "in_flight_at_attach")
				delete(acc, "running_at_detach")
				delete(acc, "lost")
				if len(acc) > 0 {
					rep.DispatchesLostWhy = acc
				}
				continue
			}
			if pid, acc, ok := parseAccount(l, "copies"); ok && pid == p.pid {
				rep.CopiesRunningAtDetach = acc["running_at_detach"]
				delete(acc, "running_at_detach")
				delete(acc, "lost")
				if len(acc) > 0 {
					rep.CopiesLostWhy = acc
				}
				continue
			}
			if pid, restored, lost, copies, ok := parseDetached(l); ok && pid == p.pid {
				rep.DetachMs = ms(time.Since(begin))
				rep.SlotsRestored, rep.DispatchesLost, rep.CopiesLost = restored, lost, copies
				rep.Unloaded = a.waitUnmapped(p.pid)
				if !rep.Unloaded {
					rep.Problem = "the preload library is still mapped after the detach (kept inert: a thread stayed inside a traced call too long); the process runs unprofiled, and the next attach loads it again"
				}
				return
			}
		case <-timer.C:
			if !alive(p.pid) {
				rep.Exited, rep.Unloaded = true, true
				return
			}
			rep.Problem = fmt.Sprintf("no \"detached\" within %s: the agent detaches by itself when it sees rocprof-go gone", a.o.DetachTimeout)
			p.conn.Close()
			rep.Unloaded = a.waitUnmapped(p.pid)
			return
		}
	}
}

// parseAccount reads an agent's account line "<word> <pid> KEY=N ...":
// the kernel dispatches' ("dispatches <pid> lost=N in_flight_at_attach=N
// running_at_detach=N" and "CLASS=N" for each class of the lost,
// rpg_attach.h) and the memory copies' ("copies <pid> lost=N
// running_at_detach=N CLASS=N...", attach_copy.c).
func parseAccount(l, word string) (pid int, acc map[string]uint64, ok bool) {
	f := strings.Fields(l)
	if len(f) < 2 || f[0] != word {
		return 0, nil, false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, nil, false
	}
	acc = map[string]uint64{}
	for _, kv := range f[2:] {
		k, v, found := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if !found || err != nil {
			return 0, nil, false
		}
		acc[k] = n
	}
	return pid, acc, true
}

// parseDetached reads "detached <pid> <restored-slots> <lost-dispatches>
// <lost-copies>" (the last may be absent: none).
func parseDetached(l string) (pid, restored int, lost, copies uint64, ok bool) {
	f := strings.Fields(l)
	if (len(f) != 4 && len(f) != 5) || f[0] != "detached" {
		return 0, 0, 0, 0, false
	}
	var e1, e2, e3, e4 error
	pid, e1 = strconv.Atoi(f[1])
	restored, e2 = strconv.Atoi(f[2])
	lost, e3 = strconv.ParseUint(f[3], 10, 64)
	if len(f) == 5 {
		copies, e4 = strconv.ParseUint(f[4], 10, 64)
	}
	return pid, restored, lost, copies, errors.Join(e1, e2, e3, e4) == nil
}

// waitUnmapped waits (up to 2 s) for the library to leave the process's
// mappings: the agent unloads it right after its "detached".
func (a *attacher) waitUnmapped(pid int) bool {
	end := time.Now().Add(2 * time.Second)
	for {
		mapped, err := libMapped(pid, a.o.Lib)
		if err == nil && !mapped {
			return true // gone, or no longer mapped
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
