package launch

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// An app that never started: the system found its file but could not run
// it. Two moments tell it:
//
//   - Before the run (Runner.Check, startable): the file's interpreter is
//     missing: a script's #! line or an ELF program's dynamic loader
//     (PT_INTERP) names a file that does not exist, or the file is no
//     program this system runs. execve would fail with a bare "no such
//     file or directory" about a file that is there.
//   - After the run (diagnoseStart): the app failed (status 127 when a
//     library is missing, 1 when one lacks a symbol version), its
//     process created no spool (the preload library records nothing before
//     the app's first traced call, and the loader never got that far), and
//     the dynamic loader, asked again to load the program in the app's own
//     environment and directory (ld.so --list: it resolves every library as
//     the app's start did and runs none of its code), fails. Its message is
//     what the app printed on its stderr, which rocprof-go does not capture
//     (the app's streams are the user's); asking the loader again is exact
//     and costs one short process only in this case. A program that ran and
//     failed by itself (exit 127 or any other status) passes the check, and
//     its run is judged as any other.

// StartFailure is an app whose dynamic loader could not start it: nothing
// was recorded, and an empty domain says nothing about the app.
type StartFailure struct {
	PID        int
	Program    string // as the user gave it
	ExitStatus int
	// Loader is the dynamic loader's message ("./app: error while
	// loading shared libraries: libfoo.so: cannot open shared object
	// file: No such file or directory").
	Loader string
}

func (e *StartFailure) Error() string {
	return fmt.Sprintf("the app could not start (exit status %d): %s; nothing was recorded: "+
		"install what is missing (or the version the program was built with), or add its directory to LD_LIBRARY_PATH (ldd %s lists what the program needs)",
		e.ExitStatus, e.Loader, e.Program)
}

// loaderCheckTimeout bounds the loader's second look at the program.
const loaderCheckTimeout = 20 * time.Second

// loaderOutputMax bounds what is read of the loader's output.
const loaderOutputMax = 64 << 10

// diagnoseStart returns the app's start failure when its pass ended as one
// whose dynamic loader failed (see above), else nil.
func diagnoseStart(argv []string, proc *ProcessResult, spoolDir string, env []string, dir string) *StartFailure {
	if proc == nil || proc.ExitStatus == 0 || proc.Signal != 0 || proc.TimedOut || len(argv) == 0 {
		return nil
	}
	if hasSpoolOf(spoolDir, proc.Pid) {
		return nil // its process recorded: it ran
	}
	path, err := lookPath(argv[0], dir, env)
	if err != nil {
		return nil
	}
	msg := loaderFailure(path, env, dir)
	if msg == "" {
		return nil
	}
	// The loader names the program by the path it was given: the user's
	// name for it reads better.
	if rest, ok := strings.CutPrefix(msg, path+":"); ok {
		msg = argv[0] + ":" + rest
	}
	return &StartFailure{PID: proc.Pid, Program: argv[0], ExitStatus: proc.ExitStatus, Loader: msg}
}

// hasSpoolOf reports whether pid created a spool in dir (rpg-PID-*.spool).
func hasSpoolOf(dir string, pid int) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return true // nothing can be told: judge the run as any other
	}
	prefix := "rpg-" + strconv.Itoa(pid) + "-"
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".spool") {
			return true
		}
	}
	return false
}

// elfInterpreter is an ELF program's dynamic loader (PT_INTERP); "" for a
// static program or a file that is not ELF.
func elfInterpreter(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
		if err != nil {
			return ""
		}
		return string(bytes.TrimRight(b, "\x00"))
	}
	return ""
}

// loaderFailure asks the program's dynamic loader to load path as its
// start did (ld.so --list, in env and dir) and returns the loader's
// message when that fails: its lines that say what could not be loaded.
// "" when the program loads, or when its loader cannot be asked.
func loaderFailure(path string, env []string, dir string) string {
	interp := elfInterpreter(path)
	if !listsLibraries(interp) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), loaderCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, interp, "--list", path)
	cmd.Env, cmd.Dir = env, dir
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its status is not the verdict: a missing library fails it, a
	// missing symbol version is printed and listed with status 0.
	if err := cmd.Run(); ctx.Err() != nil || (err != nil && !isExitError(err)) {
		return "" // the loader could not be asked
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "error while loading shared libraries") ||
			strings.HasSuffix(l, "=> not found") || strings.Contains(l, "' not found (required by ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// listsLibraries reports whether interp is a dynamic loader known to take
// --list (glibc's, musl's): another program named as a program's
// interpreter could run the app again instead.
func listsLibraries(interp string) bool {
	b := filepath.Base(interp)
	return strings.HasPrefix(b, "ld-linux") || strings.HasPrefix(b, "ld64.so") || strings.HasPrefix(b, "ld.so") ||
		strings.HasPrefix(b, "ld-musl-")
}

func isExitError(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

// limitedBuffer keeps the first loaderOutputMax bytes written to it.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := loaderOutputMax - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// startable checks, before the run, that the system can start the program
// at path: that the interpreter its #! line or its ELF header names exists
// and is a file. It returns the reason it cannot, with the fix, or nil.
func startable(path string) error {
	interp, what, fix := scriptInterpreter(path), "its #! line", "correct the #! line"
	if interp == "" {
		interp, what, fix = elfInterpreter(path), "its dynamic loader (the ELF program interpreter)",
			"build the program for this system (its loader is another C library's, or another distribution's)"
	}
	if interp == "" {
		return nil
	}
	st, err := os.Stat(interp)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s names the interpreter %s, which does not exist: install it, or %s", what, interp, fix)
	case err == nil && (st.IsDir() || st.Mode()&0o111 == 0):
		return fmt.Errorf("%s names the interpreter %s, which is not an executable file", what, interp)
	}
	return nil
}

// scriptInterpreter is the program a script's #! line names; "" when the
// file is no script.
func scriptInterpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256) // the kernel reads at most 256 bytes of it (BINPRM_BUF_SIZE)
	n, _ := io.ReadFull(f, buf)
	line, ok := bytes.CutPrefix(buf[:n], []byte("#!"))
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// startError explains why execve refused a program that lookPath found:
// the system's bare "no such file or directory" is about its interpreter.
func startError(app, path string, err error) error {
	if why := startable(path); why != nil {
		return &AppNotFoundError{App: app, Err: why}
	}
	if errors.Is(err, syscall.ENOEXEC) {
		return &AppNotFoundError{App: app, Err: fmt.Errorf("%s is no program this system can run (exec format error: another architecture, or a script without a #! line)", filepath.Clean(path))}
	}
	return &AppNotFoundError{App: app, Err: err}
}
