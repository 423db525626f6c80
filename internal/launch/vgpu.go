package launch

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

// rocrName is the ROCm runtime's shared library, which every ROCm program
// loads (directly, through HIP, or by dlopen).
const rocrName = "libhsa-runtime64.so.1"

// CheckVirtualGPU is the pre-flight check of --virtual-gpu: the virtual GPU
// reaches the app through LD_PRELOAD, so the app must be a dynamically
// linked 64-bit x86 program, and the ROCm runtime the app will load must
// know the emulated architecture (ROCm 5.2 has no gfx942 or gfx1100 in its
// ISA table: its HIP would find no device). A program that is a script, or
// whose runtime cannot be found (it may dlopen one from a path of its own),
// is not checked further. env is the app's environment.
func CheckVirtualGPU(argv []string, arch string, env []string) error {
	if len(argv) == 0 || arch == "" {
		return nil
	}
	prog, err := lookPath(argv[0], "", env)
	if err != nil {
		return nil // the launcher reports a program it cannot start
	}
	f, err := elf.Open(prog)
	if err != nil {
		return nil // a script: its interpreter is what loads ROCm
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("--virtual-gpu: %s is not a 64-bit x86 program (%v, %v); the virtual GPU exists only for x86-64 programs", prog, f.Class, f.Machine)
	}
	interp := false
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp = true
		}
	}
	if !interp {
		return fmt.Errorf("--virtual-gpu: %s is statically linked; the virtual GPU is loaded with LD_PRELOAD, which a static program ignores: link it dynamically", prog)
	}
	rocr := runtimeOf(prog, env)
	if rocr == "" {
		return nil
	}
	data, err := os.ReadFile(rocr)
	if err != nil || knowsArch(data, arch) {
		return nil
	}
	var known []string
	for _, a := range options.VirtualGPUArchs {
		if knowsArch(data, a) {
			known = append(known, a)
		}
	}
	return fmt.Errorf("--virtual-gpu=%s: the ROCm runtime %s does not know %s (ROCm 5.2 has no gfx94x or gfx11), so the app "+
		"would find no GPU: choose an architecture it knows (%s), or run the app with ROCm 6.1 or later",
		arch, rocr, arch, strings.Join(known, ", "))
}

var tracedLib = regexp.MustCompile(`^\s*(\S+) => (/\S+) \(0x`)

// runtimeOf returns the ROCm runtime library the program will load: the
// dynamic loader's resolution (LD_TRACE_LOADED_OBJECTS, what ldd does; the
// program itself does not run), else the system's default one.
func runtimeOf(prog string, env []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog)
	cmd.Env = append(withoutPreload(env), "LD_TRACE_LOADED_OBJECTS=1")
	if out, err := cmd.Output(); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if m := tracedLib.FindStringSubmatch(sc.Text()); m != nil && m[1] == rocrName {
				return m[2]
			}
		}
	}
	out, err := exec.CommandContext(ctx, "ldconfig", "-p").Output()
	if err != nil {
		out, err = exec.CommandContext(ctx, "/sbin/ldconfig", "-p").Output()
	}
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == rocrName && strings.Contains(line, "x86-64") {
			return f[len(f)-1]
		}
	}
	return ""
}

// withoutPreload drops LD_PRELOAD: the loader's trace must show the app's
// own libraries, not load the injected ones.
func withoutPreload(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LD_PRELOAD=") {
			out = append(out, kv)
		}
	}
	return out
}

// knowsArch tells whether ROCR's library names the architecture in its ISA
// table, whose entries it holds as NUL-terminated strings ("gfx942").
func knowsArch(rocr []byte, arch string) bool { return bytes.Contains(rocr, append([]byte(arch), 0)) }
