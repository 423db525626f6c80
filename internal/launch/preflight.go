package launch

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

// Warnings given before the app starts about a run that will most likely
// find no GPU to run on: the app still runs (it may use the GPU through
// code rocprof-go cannot see), but the user learns why it fails and what
// to type instead, before a long run.

// kfdPath is the device through which every ROCm runtime reaches the GPU.
var kfdPath = "/dev/kfd"

// NoGPUWarning returns a warning when the run has no GPU to give the app:
// no --virtual-gpu and no /dev/kfd (no AMD GPU driver). "" otherwise, and
// when the app cannot be found (the launcher reports that).
func NoGPUWarning(argv []string, cfg *options.Config, dir string, env []string) string {
	if len(argv) == 0 || cfg.VirtualGPU != "" {
		return ""
	}
	if _, err := lookPath(argv[0], dir, env); err != nil {
		return ""
	}
	if _, err := os.Stat(kfdPath); err == nil {
		return ""
	}
	return fmt.Sprintf("this machine has no AMD GPU driver (%s is missing): a ROCm app will find no device (hipErrorNoDevice); "+
		"add --virtual-gpu to run it on rocprof-go's virtual GPU (gfx90a, or --virtual-gpu=ARCH; timings and counter values are then emulated)", kfdPath)
}

// CodeObjectWarning returns a warning when the app's own GPU code (the
// offload bundles of its .hip_fatbin section) has no code object for the
// virtual GPU's architecture: HIP would end in hipErrorNoBinaryForGpu. It
// names the architectures the binary has and the --virtual-gpu=ARCH that
// would work. "" when it matches, or when nothing can be told (no virtual
// GPU, a script, a binary without GPU code of its own, compressed bundles).
func CodeObjectWarning(argv []string, arch, dir string, env []string) string {
	if len(argv) == 0 || arch == "" {
		return ""
	}
	prog, err := lookPath(argv[0], dir, env)
	if err != nil {
		return ""
	}
	targets, err := fatbinTargets(prog)
	if err != nil || len(targets) == 0 {
		return ""
	}
	for _, t := range targets {
		if targetRuns(t, arch) {
			return ""
		}
	}
	var emulated []string
	for _, t := range targets {
		if slices.Contains(options.VirtualGPUArchs, t) && !slices.Contains(emulated, t) {
			emulated = append(emulated, t)
		}
	}
	msg := fmt.Sprintf("--virtual-gpu=%s: %s holds GPU code for %s only, so HIP will find no kernel for %s (hipErrorNoBinaryForGpu): ",
		arch, argv[0], strings.Join(targets, ", "), arch)
	if len(emulated) > 0 {
		return msg + fmt.Sprintf("run it with --virtual-gpu=%s, or rebuild it for %s (hipcc --offload-arch=%s)", emulated[0], arch, arch)
	}
	return msg + fmt.Sprintf("the virtual GPU emulates %s; rebuild it for one of them (e.g. hipcc --offload-arch=%s)",
		strings.Join(options.VirtualGPUArchs, ", "), arch)
}

// genericTargets lists the architectures each generic code object target
// (LLVM's "gfx9-generic", ...) runs on.
var genericTargets = map[string][]string{
	"gfx9-generic":    {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"},
	"gfx9-4-generic":  {"gfx940", "gfx941", "gfx942", "gfx950"},
	"gfx10-1-generic": {"gfx1010", "gfx1011", "gfx1012", "gfx1013"},
	"gfx10-3-generic": {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"},
	"gfx11-generic":   {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"},
	"gfx12-generic":   {"gfx1200", "gfx1201"},
}

// targetRuns tells whether code built for target runs on arch.
func targetRuns(target, arch string) bool {
	return target == arch || slices.Contains(genericTargets[target], arch)
}

// bundleMagic starts every uncompressed clang offload bundle; compressed
// ones ("CCOB", hipcc --offload-compress) hide their entries.
var bundleMagic = []byte("__CLANG_OFFLOAD_BUNDLE__")

// fatbinTargets returns the GPU architectures (gfx90a, ...) of the code
// objects in an ELF program's .hip_fatbin section, in bundle order without
// repeats; none when it has no such section.
func fatbinTargets(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(".hip_fatbin")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	var out []string
	// The section holds one bundle per translation unit, each aligned to
	// 4 KiB: read every bundle header found.
	for off := bytes.Index(data, bundleMagic); off >= 0; {
		ids, err := bundleIDs(data[off:])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, id := range ids {
			if a := targetArch(id); a != "" && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		next := bytes.Index(data[off+len(bundleMagic):], bundleMagic)
		if next < 0 {
			break
		}
		off += len(bundleMagic) + next
	}
	return out, nil
}

// bundleIDs reads the entry ids of one offload bundle: the magic, a 64-bit
// entry count, then per entry its offset, size, id length and id.
func bundleIDs(b []byte) ([]string, error) {
	pos := len(bundleMagic)
	u64 := func() (uint64, bool) {
		if pos+8 > len(b) {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(b[pos:])
		pos += 8
		return v, true
	}
	n, ok := u64()
	if !ok || n > 4096 {
		return nil, fmt.Errorf("malformed offload bundle (%d entries)", n)
	}
	ids := make([]string, 0, n)
	for range n {
		_, ok1 := u64() // offset
		_, ok2 := u64() // size
		l, ok3 := u64()
		if !ok1 || !ok2 || !ok3 || l > 4096 || pos+int(l) > len(b) {
			return nil, fmt.Errorf("malformed offload bundle entry")
		}
		ids = append(ids, string(b[pos:pos+int(l)]))
		pos += int(l)
	}
	return ids, nil
}

// targetArch returns the architecture of a bundle entry id
// ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" → "gfx90a"); "" for
// the host's entry.
func targetArch(id string) string {
	_, t, ok := strings.Cut(id, "amdgcn-amd-amdhsa-")
	if !ok {
		return ""
	}
	t = strings.TrimLeft(t, "-")
	t, _, _ = strings.Cut(t, ":")
	return t
}
