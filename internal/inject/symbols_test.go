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
