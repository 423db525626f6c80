package options

import (
	"fmt"
	"os"
	"path/filepath"
)

// rocmLibSubdirs are where a ROCm installation keeps its libraries:
// /opt/rocm-X/lib (AMD's packages), lib64, and Debian's multiarch
// directory (a root such as /usr).
var rocmLibSubdirs = []string{"lib", "lib64", filepath.Join("lib", "x86_64-linux-gnu")}

// rocmRuntimeLibs are the libraries that make a directory ROCm's.
var rocmRuntimeLibs = []string{"libhsa-runtime64.so*", "libamdhip64.so*"}

// RocmLibDirs returns the library directories of --rocm-root, which the
// app's LD_LIBRARY_PATH starts with: rocprofv3 finds ROCm's libraries
// under that root, and so does the app under rocprof-go (rocprof-go's own
// libraries are embedded). Nil without --rocm-root; an error when the root
// holds no ROCm runtime library.
func (c *Config) RocmLibDirs() ([]string, error) {
	if c.RocmRoot == "" {
		return nil, nil
	}
	root, err := filepath.Abs(c.RocmRoot)
	if err != nil {
		return nil, &UsageError{Option: "--rocm-root", Msg: err.Error()}
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, &UsageError{Option: "--rocm-root", Msg: fmt.Sprintf("%s is not a directory: name the ROCm installation whose libraries the app should use, e.g. /opt/rocm-6.1.0", root)}
	}
	var dirs []string
	for _, sub := range rocmLibSubdirs {
		dir := filepath.Join(root, sub)
		for _, pat := range rocmRuntimeLibs {
			if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
				dirs = append(dirs, dir)
				break
			}
		}
	}
	if len(dirs) == 0 {
		return nil, &UsageError{Option: "--rocm-root", Msg: fmt.Sprintf("%s holds no ROCm runtime (libhsa-runtime64.so or libamdhip64.so in lib/, lib64/ or lib/x86_64-linux-gnu/): "+
			"name the directory that holds ROCm's lib/, e.g. /opt/rocm-6.1.0, or leave the option out to use the libraries the app finds by itself", root)}
	}
	return dirs, nil
}
