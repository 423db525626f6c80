package otf2

import (
	"bufio"
	"errors"
	"os"
	"strings"
)

// ErrOTF2Unavailable is matched (errors.Is) by the error of an OTF2 output
// when the OTF2 library cannot be loaded.
var ErrOTF2Unavailable = errors.New("the OTF2 library is not available")

// otf2Sonames are the names under which the OTF2 writer looks for the OTF2
// library (dlopen, so LD_LIBRARY_PATH and the system's library directories
// apply), in order. Debian renamed upstream's libotf2 (a clash with the
// OpenType library libotf); sid also changed the dash to an underscore.
var otf2Sonames = []string{
	"libopen-trace-format2.so.10", // Debian bookworm, trixie (OTF2 3.0)
	"libopen_trace_format2.so.10", // Debian forky and sid (OTF2 3.2)
	"libotf2.so.10",               // upstream's name: OTF2 built from source, Spack, Score-P
}

// debianOTF2Packages are the Debian packages that install the OTF2 library,
// by VERSION_CODENAME (apt-cache policy, November 2026). Experimental has
// none of its own: sid's applies.
var debianOTF2Packages = []struct{ codename, release, pkg string }{
	{"bookworm", "bookworm", "libopen-trace-format2-10"},
	{"trixie", "trixie", "libopen-trace-format2-10t64"},
	{"forky", "forky/sid", "libopen-trace-format2-10u"}, // testing and unstable
}

// osReleasePath is read to name the package for the running system.
var osReleasePath = "/etc/os-release"

// OTF2LibraryError says why the OTF2 library could not be loaded and how to
// install it. It matches ErrOTF2Unavailable.
type OTF2LibraryError struct {
	// Tried lists the library names dlopen was given, in order.
	Tried []string
	// Failures holds the loader's messages for libraries that exist but
	// could not be used (another architecture, a missing OTF2 function);
	// empty when none of the names was found.
	Failures []string
	// OSRelease is the running system's /etc/os-release.
	OSRelease string
}

func (e *OTF2LibraryError) Error() string {
	var b strings.Builder
	if len(e.Failures) == 0 {
		b.WriteString("the OTF2 library is not installed (-f otf2 loads " + orList(e.Tried) + ")")
	} else {
		b.WriteString("the OTF2 library cannot be used (" + strings.Join(e.Failures, "; ") + ")")
	}
	release, pkg := debianOTF2Package(e.OSRelease)
	var others []string
	for _, p := range debianOTF2Packages {
		if p.pkg != pkg {
			others = append(others, p.release+": "+p.pkg)
		}
	}
	if pkg != "" {
		b.WriteString(": install Debian's " + pkg + " (this is " + release + "; " + strings.Join(others, ", ") + ")")
	} else {
		b.WriteString(": install OTF2 3.x (Debian " + strings.Join(others, ", ") + "; elsewhere put its lib directory in LD_LIBRARY_PATH)")
	}
	b.WriteString(", or write another format now (e.g. -f rocpd) and convert it where OTF2 is installed (rocprof-go convert -f otf2)")
	return b.String()
}

// Is reports whether target is ErrOTF2Unavailable.
func (e *OTF2LibraryError) Is(target error) bool { return target == ErrOTF2Unavailable }

func orList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// debianOTF2Package returns the running Debian release ("trixie",
// "forky/sid") and its OTF2 library package, from the text of
// /etc/os-release; both are empty on another system or release.
func debianOTF2Package(osRelease string) (release, pkg string) {
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(osRelease))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			fields[k] = strings.Trim(v, `"'`)
		}
	}
	if fields["ID"] != "debian" {
		return "", ""
	}
	for _, p := range debianOTF2Packages {
		if p.codename == fields["VERSION_CODENAME"] {
			return p.release, p.pkg
		}
	}
	return "", ""
}

// readOSRelease returns /etc/os-release's text, or "" when it cannot be read.
func readOSRelease() string {
	b, err := os.ReadFile(osReleasePath)
	if err != nil {
		return ""
	}
	return string(b)
}

// Check loads the OTF2 library now, so that a run asking for -f otf2
// can fail before the application starts rather than after it finished. It
// returns the error the OTF2 output would (an *OTF2LibraryError, or the
// CGO_ENABLED=0 build's error).
func Check() error { return loadOTF2() }
