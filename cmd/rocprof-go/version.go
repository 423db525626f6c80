package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// rocmVersion is the ROCm generation rocprof-go is built and tested against.
const rocmVersion = "5.2.3"

// gitRevision is the commit the binary was built from, set by the Makefile
// with -ldflags "-X main.gitRevision=..." (a "-dirty" suffix when the tree
// had changes). The Go toolchain's own stamp (vcs.revision) is the fallback:
// it is missing when the build sets -buildvcs=false, as GOFLAGS often does
// in containers, or builds outside a git checkout.
var gitRevision = ""

// revision is the git revision --version prints.
func revision() string {
	if gitRevision != "" {
		return gitRevision
	}
	rev, dirty := "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "" {
		return "unknown (build with make build, which records it)"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// writeVersion prints rocprofv3's version block: keys right-aligned to 16.
func writeVersion(w io.Writer) {
	rev := revision()
	var u unix.Utsname
	_ = unix.Uname(&u)
	for _, kv := range [][2]string{
		{"version", version},
		{"git_revision", rev},
		{"library_arch", runtime.GOARCH + "-linux-gnu"},
		{"system_name", unix.ByteSliceToString(u.Sysname[:])},
		{"system_processor", unix.ByteSliceToString(u.Machine[:])},
		{"system_version", unix.ByteSliceToString(u.Release[:])},
		{"compiler_id", "gc"},
		{"compiler_version", runtime.Version()},
		{"rocm_version", rocmVersion},
	} {
		fmt.Fprintf(w, "%16s: %s\n", kv[0], kv[1])
	}
}
