package launch

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// NotesEnv hands the app's processes the pass's report channel: FD:DEV:INO
// of the notes file (internal/hsa/preload/notes.c writes it).
const NotesEnv = toolenv.GoNotesFd

// notesFile is the report channel's name in the pass's private directory.
const notesFile = "notes"

// notesMax bounds what is read of a notes file: one line is at most 1 KiB,
// and a process writes at most a few.
const notesMax = 4 << 20

// UnprofiledProcess is a process of the app that was not profiled, or not
// wholly: its records are lost, and nothing of it may be in the outputs.
type UnprofiledProcess struct {
	PID     int    `json:"pid"`
	Command string `json:"command,omitempty"` // its program's name (the exec'd path for an exec)
	// Cause is what happened: "spool_not_created" (the process could not
	// create its spool: every record it made is lost), "profiler_removed"
	// (it was started by exec or posix_spawn with LD_PRELOAD or
	// ROCPROF_GO_SPOOL_DIR removed from its environment: it recorded
	// nothing).
	Cause string `json:"cause"`
	// Error is the system's error for spool_not_created ("permission
	// denied"); Reason says why, when it is known.
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason"`
}

// CauseNoGPURuntime is a process started without the profiler whose program
// links none of the libraries through which anything is recorded (HIP, HSA,
// ROCTx, RCCL): a launcher's or wrapper's tool (readlink, unshare, a
// shell's helpers). It is listed, but nothing of it was lost.
const CauseNoGPURuntime = "profiler_removed_no_gpu_runtime"

// Lost reports whether what the process did is missing from the outputs.
func (p UnprofiledProcess) Lost() bool { return p.Cause != CauseNoGPURuntime }

// recordingLibs are the sonames (without version) of the libraries a
// program records through: a program that links none of them directly has
// nothing the profiler collects (HIP is never linked statically).
var recordingLibs = []string{"libamdhip64.so", "libhsa-runtime64.so", "libroctx64.so", "librocprofiler-sdk-roctx.so",
	"librccl.so", "librocprofiler-sdk.so", "libhsakmt.so"}

// linksRecordingLib reports whether the program at path is an ELF file that
// needs one of recordingLibs; known is false when that cannot be told (not
// readable, not ELF: a script's interpreter may load anything).
func linksRecordingLib(path string) (links, known bool) {
	if !filepath.IsAbs(path) {
		return false, false
	}
	f, err := elf.Open(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return false, false
	}
	for _, l := range libs {
		for _, r := range recordingLibs {
			if l == r || strings.HasPrefix(l, r+".") {
				return true, true
			}
		}
	}
	return false, true
}

// classifyExecs marks the programs started without the profiler that could
// not have recorded anything (CauseNoGPURuntime).
func classifyExecs(ps []UnprofiledProcess) {
	for i, p := range ps {
		if p.Cause != "profiler_removed" {
			continue
		}
		if links, known := linksRecordingLib(p.Command); known && !links {
			ps[i].Cause = CauseNoGPURuntime
			ps[i].Reason = fmt.Sprintf("%s ran without the profiler; it links no GPU runtime (HIP, HSA, ROCTx, RCCL), so it had nothing to record", p.Command)
		}
	}
}

// notesChannel is a pass's report channel as the CLI holds it: the file it
// reads after the app's tree exited, and the inheritable descriptor the app
// gets while it starts.
type notesChannel struct {
	file    *os.File // O_APPEND, close-on-exec: read back after the pass
	inherit int      // a duplicate without close-on-exec, closed once the app started
	value   string   // NotesEnv's value
}

// openNotes creates the pass's notes file in its private directory and an
// inheritable descriptor of it, numbered high (F_DUPFD from 512, as the
// preload library keeps its own) so that it is out of the way of the low
// numbers apps use and close.
func openNotes(runDir *securedir.Dir, pass string) (*notesChannel, error) {
	d, err := runDir.OpenPrivate(pass)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	f, err := d.Create(notesFile, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot create the run's notes file: %w", err)
	}
	fd := int(f.Fd())
	// Locked shared for as long as a descriptor of it is open here or in
	// the app's processes (they inherit it): a later run removes this run's
	// directory, when its rocprof-go was killed, only once nothing holds
	// the lock (notesReleased).
	err = unix.Flock(fd, unix.LOCK_SH)
	if err == nil {
		var fl int
		if fl, err = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_APPEND)
		}
	}
	var st unix.Stat_t
	if err == nil {
		err = unix.Fstat(fd, &st)
	}
	inherit := -1
	if err == nil {
		inherit, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD, 512)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot set up the run's notes file %s: %w", f.Name(), err)
	}
	return &notesChannel{file: f, inherit: inherit, value: fmt.Sprintf("%d:%d:%d", inherit, st.Dev, st.Ino)}, nil
}

// notesReleased reports whether no process holds the notes file in the
// open pass directory pd any longer: no process of its run (which
// inherited the descriptor openNotes locked) still runs.
func notesReleased(pd *os.File) bool {
	fd, err := unix.Openat(int(pd.Fd()), notesFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil
}

// started closes the inheritable descriptor once the app has it.
func (n *notesChannel) started() {
	if n != nil && n.inherit >= 0 {
		_ = unix.Close(n.inherit)
		n.inherit = -1
	}
}

// read parses what the app's processes wrote, and closes the file.
func (n *notesChannel) read() []UnprofiledProcess {
	if n == nil {
		return nil
	}
	n.started()
	defer n.file.Close()
	f, err := os.Open(n.file.Name())
	if err != nil {
		return nil
	}
	defer f.Close()
	ps := parseNotes(io.LimitReader(f, notesMax))
	classifyExecs(ps)
	return ps
}

// parseNotes turns notes lines into the processes they describe: an exec
// followed by its failure (same pid) is void.
func parseNotes(r io.Reader) []UnprofiledProcess {
	var out []UnprofiledProcess
	execAt := map[int]int{} // pid -> index in out of its last exec note
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("rpg-note\t")) {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Split(string(line), "\t")[1:] {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
			}
		}
		pid, err := strconv.Atoi(kv["pid"])
		if err != nil || kv["v"] != "1" {
			continue
		}
		num := func(k string) int { v, _ := strconv.Atoi(kv[k]); return v }
		switch kv["kind"] {
		case "spool":
			errno := syscall.Errno(num("errno"))
			out = append(out, UnprofiledProcess{PID: pid, Command: kv["comm"], Cause: "spool_not_created",
				Error: errno.Error(), Reason: spoolFailureReason(errno, kv["stage"], kv["path"], num("start_euid"), num("euid"))})
		case "exec", "spawn":
			how := "exec'd"
			if kv["kind"] == "spawn" {
				how = "started (posix_spawn) by pid " + kv["ppid"] + " as"
			}
			out = append(out, UnprofiledProcess{PID: pid, Command: kv["path"], Cause: "profiler_removed",
				Reason: fmt.Sprintf("%s %s with LD_PRELOAD or %s removed from its environment (env -u LD_PRELOAD, env -i, sudo, a launcher that builds its own environment): that program ran without the profiler", how, kv["path"], SpoolDirEnv)})
			if kv["kind"] == "exec" {
				execAt[pid] = len(out) - 1
			}
		case "exec-failed":
			if i, ok := execAt[pid]; ok && out[i].PID == pid {
				out = append(out[:i], out[i+1:]...)
				delete(execAt, pid)
				for p, j := range execAt {
					if j > i {
						execAt[p] = j - 1
					}
				}
			}
		}
	}
	return out
}

// spoolFailureReason says why a process could not create its spool, as far
// as its note tells.
func spoolFailureReason(errno syscall.Errno, stage, dir string, startEUID, euid int) string {
	switch {
	case stage == "map" && errno == syscall.ENOSPC:
		return fmt.Sprintf("the spool file system of %s was full when the process started recording: free space there, or set %s=DIR", dir, SpoolRootEnv)
	case (errno == syscall.EACCES || errno == syscall.EPERM) && euid != startEUID:
		return fmt.Sprintf("the process changed its user (setuid: uid %d, started as %d), and the run's private directory %s is not that user's: profile it as that user (run rocprof-go as it), or have the app change its user before it is started", euid, startEUID, dir)
	case errno == syscall.EACCES || errno == syscall.EPERM:
		return fmt.Sprintf("the process may not create files in the run's private directory %s (another user, or a security policy)", dir)
	case errno == syscall.ENOENT:
		return fmt.Sprintf("the run's private directory %s does not exist where the process looks: it runs in another mount namespace with its own /dev/shm or /tmp (a container, bwrap, unshare), or changed its root; set %s=DIR to a directory it shares with rocprof-go", dir, SpoolRootEnv)
	case errno == syscall.EROFS:
		return fmt.Sprintf("%s is read-only where the process runs (a container or sandbox)", dir)
	}
	return fmt.Sprintf("creating its spool in %s failed (%s)", dir, stage)
}
