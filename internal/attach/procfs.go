package attach

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runtimeLibs are the libraries whose mapping makes a process one that
// runs GPU work: HIP or the HSA runtime (any version's soname).
var runtimeLibs = []string{"libamdhip64.so", "libhsa-runtime64.so"}

// runtimeLoaded reports whether pid has mapped a HIP or HSA library.
func runtimeLoaded(pid int) bool {
	found := false
	_ = eachMapping(pid, func(path string) bool {
		base := path[strings.LastIndexByte(path, '/')+1:]
		for _, l := range runtimeLibs {
			if strings.HasPrefix(base, l) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// libMapped reports whether pid maps the file lib.
func libMapped(pid int, lib string) (bool, error) {
	found := false
	err := eachMapping(pid, func(path string) bool {
		if path == lib || strings.TrimSuffix(path, " (deleted)") == lib {
			found = true
			return false
		}
		return true
	})
	if err != nil && !alive(pid) {
		return false, nil
	}
	return found, err
}

// eachMapping calls f with the path of each file mapping of pid until f
// returns false.
func eachMapping(pid int, f func(path string) bool) error {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// address perms offset dev inode path
		fields := 0
		i := 0
		for i < len(line) && fields < 5 {
			for i < len(line) && line[i] != ' ' {
				i++
			}
			for i < len(line) && line[i] == ' ' {
				i++
			}
			fields++
		}
		if i >= len(line) || line[i] != '/' {
			continue
		}
		if !f(line[i:]) {
			return nil
		}
	}
	return sc.Err()
}

// alive reports whether pid is a running process (a zombie is not).
func alive(pid int) bool {
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return false
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	if i < 0 || i+2 >= len(st) {
		return false
	}
	return st[i+2] != 'Z' && st[i+2] != 'X'
}

// parentOf is pid's parent (0 if unknown).
func parentOf(pid int) int {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(st[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// signalName is "SIGINT" for SIGINT.
func signalName(s os.Signal) string {
	if n, ok := s.(syscall.Signal); ok {
		if name := unix.SignalName(n); name != "" {
			return name
		}
	}
	return s.String()
}

// TerminalStdin reports whether f is a terminal this process may read
// (its foreground process group is ours): only then does Enter detach.
// A background rocprof-go reading its terminal would be stopped (SIGTTIN).
func TerminalStdin(f *os.File) bool {
	if f == nil {
		return false
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return false
	}
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}
