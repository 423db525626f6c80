//go:build cgo

package otf2

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// withOTF2Libraries makes loadOTF2 look for names, on a system whose
// /etc/os-release says osRelease, as if no library had been loaded yet.
func withOTF2Libraries(t *testing.T, osRelease string, names ...string) {
	t.Helper()
	rel := filepath.Join(t.TempDir(), "os-release")
	require.NoError(t, os.WriteFile(rel, []byte(osRelease), 0o644))
	savedNames, savedRel := otf2Sonames, osReleasePath
	otf2Loaded.Lock()
	savedLoaded := otf2Loaded.soname
	otf2Loaded.soname = ""
	otf2Loaded.Unlock()
	otf2Sonames, osReleasePath = names, rel
	t.Cleanup(func() {
		otf2Sonames, osReleasePath = savedNames, savedRel
		otf2Loaded.Lock()
		otf2Loaded.soname = savedLoaded
		otf2Loaded.Unlock()
	})
}

// Without the library, -f otf2 fails before touching its output: the
// error names the package to install on this Debian release and the other
// way out, and an archive already at the path is left as it was.
func TestOTF2WithoutTheLibrary(t *testing.T) {
	withOTF2Libraries(t, trixieOSRelease, "libno-such-otf2.so.10", "libno-such-otf2-either.so.10")
	in := outputtest.NewInput(t, []int32{100}, 4)
	prefix := outputtest.TempPrefix(t)
	path := prefix + "_results"
	old := path + ".otf2"
	require.NoError(t, os.WriteFile(old, []byte("an earlier run's archive"), 0o644))

	err := Write(path, in)
	require.ErrorIs(t, err, ErrOTF2Unavailable)
	var lerr *OTF2LibraryError
	require.ErrorAs(t, err, &lerr)
	// (-f otf2 adds "otf2 output <path>: " before it: the registry's
	// TestWriterErrorNamesFormatAndPath.)
	require.Equal(t, "the OTF2 library is not installed "+
		"(-f otf2 loads libno-such-otf2.so.10 or libno-such-otf2-either.so.10): "+
		"install Debian's libopen-trace-format2-10t64 (this is trixie; bookworm: libopen-trace-format2-10, "+
		"forky/sid: libopen-trace-format2-10u), or write another format now (e.g. -f rocpd) and convert it "+
		"where OTF2 is installed (rocprof-go convert -f otf2)", err.Error())
	require.NoDirExists(t, path)
	b, err := os.ReadFile(old)
	require.NoError(t, err)
	require.Equal(t, "an earlier run's archive", string(b))
}

// A library that loads but lacks OTF2's functions is named with the first
// one missing; the next name that is OTF2 is then used.
func TestOTF2SkipsALibraryThatIsNotOTF2(t *testing.T) {
	withOTF2Libraries(t, sidOSRelease, "libm.so.6")
	err := loadOTF2()
	require.ErrorIs(t, err, ErrOTF2Unavailable)
	require.Contains(t, err.Error(), "the OTF2 library cannot be used (libm.so.6 has no OTF2_Archive_Open: it is not OTF2 3.x): "+
		"install Debian's libopen-trace-format2-10u (this is forky/sid; bookworm: libopen-trace-format2-10, trixie: libopen-trace-format2-10t64)")

	otf2Sonames = append([]string{"libm.so.6"}, savedOTF2Sonames...)
	require.NoError(t, loadOTF2())
	otf2Loaded.Lock()
	defer otf2Loaded.Unlock()
	require.Contains(t, savedOTF2Sonames, otf2Loaded.soname)
}

// savedOTF2Sonames is the real list, before any test changes it.
var savedOTF2Sonames = append([]string(nil), otf2Sonames...)
