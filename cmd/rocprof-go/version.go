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

// writeVersion prints rocprofv3's version block: keys right-aligned to 16.
func writeVersion(w io.Writer) {
	rev := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
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
