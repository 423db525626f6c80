package inject

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoaderAddressesAreTheProcesss: the addresses found from maps and
// libc's dynamic symbols are those the process's own code calls.
func TestLoaderAddressesAreTheProcesss(t *testing.T) {
	dir := t.TempDir()
	target := cc(t, dir, "target", "target.c", "-pthread", "-ldl")
	cmd := exec.Command(target, "addrs")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 256)
	var got string
	for !strings.Contains(got, "ready") {
		n, err := out.Read(buf)
		require.NoError(t, err)
		got += string(buf[:n])
	}
	want := strings.Split(got, "\n")[0]

	maps, err := readMaps(cmd.Process.Pid)
	require.NoError(t, err)
	ld, e := findLoader(cmd.Process.Pid, maps)
	require.Nil(t, e)
	require.Equal(t, "dlopen in libc.so.6", ld.how)
	require.Equal(t, want, fmt.Sprintf("%#x %#x %#x %#x", ld.dlopen, ld.dlsym, ld.dlerr, ld.dlclose))
}

// TestLookupPrefersTheVersionAsked: with dlopen@GLIBC_2.2.5 (hidden) and
// dlopen@@GLIBC_2.34 at different addresses, the version asked wins, then
// the default one; an undefined or data symbol is no function.
func TestLookupPrefersTheVersionAsked(t *testing.T) {
	fn := elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC)
	m := &module{bias: 0x1000, versions: map[uint16]string{2: "GLIBC_2.2.5", 3: "GLIBC_2.34", 4: "GLIBC_PRIVATE"}, syms: []elf.Symbol{
		{Name: "dlopen", Info: fn, Section: 12, Value: 0x100, HasVersion: true, VersionIndex: 0x8000 | 2},
		{Name: "dlopen", Info: fn, Section: 12, Value: 0x200, HasVersion: true, VersionIndex: 3},
		{Name: "dlsym", Info: fn, Section: elf.SHN_UNDEF, Value: 0, HasVersion: true, VersionIndex: 3},
		{Name: "dlerror", Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_OBJECT), Section: 12, Value: 0x300},
		{Name: "__libc_dlopen_mode", Info: fn, Section: 12, Value: 0x400, HasVersion: true, VersionIndex: 4},
	}}
	require.Equal(t, uint64(0x1200), m.lookup("dlopen", "GLIBC_2.34"))
	require.Equal(t, uint64(0x1100), m.lookup("dlopen", "GLIBC_2.2.5"))
	require.Equal(t, uint64(0x1200), m.lookup("dlopen", ""), "the default version")
	require.Zero(t, m.lookup("dlsym", ""))
	require.Zero(t, m.lookup("dlerror", ""))
	require.Equal(t, uint64(0x1400), m.lookup("__libc_dlopen_mode", ""))
}

// TestFindDlopenBeforeGlibc234: glibc before 2.34 has dlopen in libdl.so.2,
// when the program loaded it, else only its private __libc_dlopen_mode
// (called with __RTLD_DLOPEN, no dlerror); a libc with neither is refused.
// (Every runtime here has glibc 2.36 or later: the modules are made up.)
func TestFindDlopenBeforeGlibc234(t *testing.T) {
	fn := elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC)
	sym := func(name string, v uint64) elf.Symbol {
		return elf.Symbol{Name: name, Info: fn, Section: 12, Value: v}
	}
	oldLibc := &module{path: "/lib/libc-2.31.so", bias: 0x10000, syms: []elf.Symbol{
		sym("__libc_dlopen_mode", 0x100), sym("__libc_dlsym", 0x200), sym("__libc_dlclose", 0x300), sym("__errno_location", 0x400)}}
	libdl := &module{path: "/lib/libdl-2.31.so", bias: 0x20000, syms: []elf.Symbol{
		sym("dlopen", 0x10), sym("dlsym", 0x20), sym("dlerror", 0x30), sym("dlclose", 0x40)}}

	ld, e := findDlopen(1, oldLibc, func() *module { return libdl })
	require.Nil(t, e)
	require.Equal(t, loader{from: libdl.path, dlopen: 0x20010, dlsym: 0x20020, dlerr: 0x20030, dlclose: 0x20040,
		how: "dlopen in libdl.so.2"}, *ld)

	ld, e = findDlopen(1, oldLibc, func() *module { return nil })
	require.Nil(t, e)
	require.Equal(t, loader{from: oldLibc.path, dlopen: 0x10100, dlsym: 0x10200, dlclose: 0x10300, extraMode: rtldDlopen,
		how: "__libc_dlopen_mode in libc.so.6"}, *ld)

	_, e = findDlopen(1, &module{path: "/lib/libc.so.6"}, func() *module { return nil })
	require.NotNil(t, e)
	require.Equal(t, "cannot attach to PID 1: its C library (/lib/libc.so.6) has no dlopen the profiler can call; "+
		"attach works with glibc-linked processes; start the app under rocprof-go instead (launch mode)", e.Error())
	require.True(t, libcName.MatchString("libc-2.31.so") && libcName.MatchString("libc.so.6") && !libcName.MatchString("libcrypt.so.1"))
	require.True(t, libdlName.MatchString("libdl-2.31.so") && libdlName.MatchString("libdl.so.2"))
}
