package otf2

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	trixieOSRelease = "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nNAME=\"Debian GNU/Linux\"\n" +
		"VERSION_ID=\"13\"\nVERSION_CODENAME=trixie\nID=debian\n"
	sidOSRelease = "PRETTY_NAME=\"Debian GNU/Linux forky/sid\"\nNAME=\"Debian GNU/Linux\"\n" +
		"VERSION_CODENAME=forky\nID=debian\n"
)

func TestDebianOTF2Package(t *testing.T) {
	for _, tc := range []struct{ name, osRelease, release, pkg string }{
		{"bookworm", "ID=debian\nVERSION_CODENAME=bookworm\n", "bookworm", "libopen-trace-format2-10"},
		{"trixie", trixieOSRelease, "trixie", "libopen-trace-format2-10t64"},
		{"sid", sidOSRelease, "forky/sid", "libopen-trace-format2-10u"},
		{"a later release", "ID=debian\nVERSION_CODENAME=duke\n", "", ""},
		{"ubuntu", "ID=ubuntu\nVERSION_CODENAME=noble\n", "", ""},
		{"unreadable", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release, pkg := debianOTF2Package(tc.osRelease)
			require.Equal(t, tc.release, release)
			require.Equal(t, tc.pkg, pkg)
		})
	}
	// Elsewhere the error lists Debian's packages and LD_LIBRARY_PATH.
	err := &OTF2LibraryError{Tried: []string{"a.so"}, OSRelease: "ID=fedora\n"}
	require.Contains(t, err.Error(), "install OTF2 3.x (Debian bookworm: libopen-trace-format2-10, "+
		"trixie: libopen-trace-format2-10t64, forky/sid: libopen-trace-format2-10u; elsewhere put its lib directory in LD_LIBRARY_PATH)")
	require.True(t, errors.Is(err, ErrOTF2Unavailable))
}
