package inject

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mapping is one line of /proc/PID/maps.
type mapping struct {
	start, end, off uint64
	perms           string
	major, minor    uint32
	inode           uint64
	path            string
}

func readMaps(pid int) ([]mapping, error) {
	f, err := os.Open(procPath(pid, "maps"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fl := strings.Fields(line)
		if len(fl) < 5 {
			continue
		}
		var m mapping
		lo, hi, _ := strings.Cut(fl[0], "-")
		m.start, _ = strconv.ParseUint(lo, 16, 64)
		m.end, _ = strconv.ParseUint(hi, 16, 64)
		m.perms = fl[1]
		m.off, _ = strconv.ParseUint(fl[2], 16, 64)
		ma, mi, _ := strings.Cut(fl[3], ":")
		a, _ := strconv.ParseUint(ma, 16, 32)
		b, _ := strconv.ParseUint(mi, 16, 32)
		m.major, m.minor = uint32(a), uint32(b)
		m.inode, _ = strconv.ParseUint(fl[4], 10, 64)
		if len(fl) >= 6 {
			// The path is the rest of the line after the inode (it may hold spaces).
			idx := strings.Index(line, fl[4]+" ")
			if idx >= 0 {
				m.path = strings.TrimSpace(line[idx+len(fl[4]):])
			}
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// module is a file mapped into the target: its load bias (what its
// symbols' values are relative to) and its dynamic symbols.
type module struct {
	path string
	bias uint64
	syms []elf.Symbol
	// versions names the module's version definitions by index (for
	// choosing dlopen@GLIBC_2.34 over dlopen@GLIBC_2.2.5).
	versions map[uint16]string
}

var (
	libcName  = regexp.MustCompile(`^libc(\.so\.6|-2\.[0-9]+\.so)$`)
	libdlName = regexp.MustCompile(`^libdl(\.so\.2|-2\.[0-9]+\.so)$`)
)

// findModule returns the first mapped file whose base name matches re, or
// nil when none is mapped.
func findModule(pid int, maps []mapping, re *regexp.Regexp) (*module, error) {
	for i, m := range maps {
		if m.inode == 0 || m.off != 0 || !strings.HasPrefix(m.path, "/") {
			continue
		}
		if !re.MatchString(filepath.Base(strings.TrimSuffix(m.path, " (deleted)"))) {
			continue
		}
		return loadModule(pid, maps, i)
	}
	return nil, nil
}

// openMapped opens the file of a mapping: by its path as maps gives it,
// from this process's root or the target's (/proc/PID/root), checked to be
// the mapped file (device and inode), else through /proc/PID/map_files.
func openMapped(pid int, m mapping) (*os.File, error) {
	same := func(f *os.File) bool {
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) != nil {
			return false
		}
		return st.Ino == m.inode && unix.Major(st.Dev) == m.major && unix.Minor(st.Dev) == m.minor
	}
	p := strings.TrimSuffix(m.path, " (deleted)")
	// maps spells a path from the reader's root when it can (a process in
	// a chroot of a private mount namespace, as the ROCm roots run, shows
	// the host's paths), else from the process's own.
	for _, q := range []string{p, procPath(pid, "root") + p} {
		if f, err := os.Open(q); err == nil {
			if same(f) {
				return f, nil
			}
			f.Close()
		}
	}
	f, err := os.Open(procPath(pid, "map_files", fmt.Sprintf("%x-%x", m.start, m.end)))
	if err != nil {
		return nil, fmt.Errorf("reading %s as PID %d maps it: %w", p, pid, err)
	}
	return f, nil
}

func loadModule(pid int, maps []mapping, i int) (*module, error) {
	m := maps[i]
	f, err := openMapped(pid, m)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.path, err)
	}
	defer ef.Close()
	mod := &module{path: m.path}
	if ef.Type == elf.ET_DYN {
		// The mapping at offset 0 holds the first PT_LOAD segment.
		for _, p := range ef.Progs {
			if p.Type == elf.PT_LOAD {
				mod.bias = m.start - (p.Vaddr &^ 0xfff)
				break
			}
		}
	}
	mod.syms, err = ef.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("%s: dynamic symbols: %w", m.path, err)
	}
	if defs, err := ef.DynamicVersions(); err == nil {
		mod.versions = map[uint16]string{}
		for _, d := range defs {
			mod.versions[d.Index] = d.Name
		}
	}
	return mod, nil
}

// lookup returns the address of the function name defined by the module:
// the default version (name@@V) when versioned, else version want when
// given, else any definition; 0 when the module does not define it.
func (m *module) lookup(name, want string) uint64 {
	var any, wanted, def uint64
	for _, s := range m.syms {
		if s.Name != name || s.Section == elf.SHN_UNDEF || s.Value == 0 {
			continue
		}
		if t := elf.ST_TYPE(s.Info); t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
			continue
		}
		addr := m.bias + s.Value
		if any == 0 {
			any = addr
		}
		if s.HasVersion {
			if want != "" && m.versions[s.VersionIndex.Index()] == want {
				wanted = addr
			}
			if !s.VersionIndex.IsHidden() {
				def = addr
			}
		}
	}
	switch {
	case wanted != 0:
		return wanted
	case def != 0:
		return def
	}
	return any
}

// loader is how the target loads a library: the addresses of its dlopen,
// dlsym and dlerror (0 when it has none), and the mode bits dlopen needs.
type loader struct {
	from                          string // the module: libc.so.6, libdl.so.2
	dlopen, dlsym, dlerr, dlclose uint64
	errnoLoc                      uint64 // __errno_location: the thread's errno is kept
	extraMode                     uint64
	how                           string // "dlopen@GLIBC_2.34", "__libc_dlopen_mode", ...
}

// rtldDlopen is glibc's __RTLD_DLOPEN: what its own callers of
// __libc_dlopen_mode pass, so that the object counts as dlopen'ed.
const rtldDlopen = 0x80000000

// findLoader finds glibc's dlopen in the target: in libc.so.6 (glibc
// 2.34 and later, default version dlopen@@GLIBC_2.34), else in a loaded
// libdl.so.2, else glibc's private __libc_dlopen_mode and __libc_dlsym
// (no dlerror text then). The error says why none is reachable.
func findLoader(pid int, maps []mapping) (*loader, *Error) {
	libc, err := findModule(pid, maps, libcName)
	if err != nil {
		return nil, &Error{PID: pid, Cause: "its C library cannot be read: " + err.Error(),
			Fix: "run rocprof-go where it can read the target's files (the same mount namespace, as root)", Err: err}
	}
	if libc == nil {
		return nil, nil
	}
	libdl := func() *module {
		dl, err := findModule(pid, maps, libdlName)
		if err != nil {
			return nil
		}
		return dl
	}
	ld, e := findDlopen(pid, libc, libdl)
	if ld != nil {
		ld.errnoLoc = libc.lookup("__errno_location", "")
	}
	return ld, e
}

// findDlopen chooses the dlopen of libc, or of the libdl libdl returns
// (nil when none is loaded).
func findDlopen(pid int, libc *module, libdl func() *module) (*loader, *Error) {
	if a := libc.lookup("dlopen", "GLIBC_2.34"); a != 0 {
		return &loader{from: libc.path, dlopen: a, dlsym: libc.lookup("dlsym", "GLIBC_2.34"),
			dlerr: libc.lookup("dlerror", "GLIBC_2.34"), dlclose: libc.lookup("dlclose", "GLIBC_2.34"), how: "dlopen in libc.so.6"}, nil
	}
	if dl := libdl(); dl != nil {
		if a := dl.lookup("dlopen", ""); a != 0 {
			return &loader{from: dl.path, dlopen: a, dlsym: dl.lookup("dlsym", ""), dlerr: dl.lookup("dlerror", ""),
				dlclose: dl.lookup("dlclose", ""), how: "dlopen in libdl.so.2"}, nil
		}
	}
	if a := libc.lookup("__libc_dlopen_mode", ""); a != 0 {
		return &loader{from: libc.path, dlopen: a, dlsym: libc.lookup("__libc_dlsym", ""), dlclose: libc.lookup("__libc_dlclose", ""), extraMode: rtldDlopen,
			how: "__libc_dlopen_mode in libc.so.6"}, nil
	}
	return nil, &Error{PID: pid, Cause: "its C library (" + libc.path + ") has no dlopen the profiler can call",
		Fix: "attach works with glibc-linked processes; start the app under rocprof-go instead (launch mode)"}
}
