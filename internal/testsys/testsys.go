// Package testsys holds the system fixtures of the tests that play a hostile
// or unlucky environment: a second local user, a small file system. They
// need root, as CI runs the tests; run as another user they fail, naming
// why, rather than skip. It also describes the host the benchmarks measure
// on (Host: CPU, hypervisor, clock source, clock reads' cost), the line
// `make bench` prints beside every overhead ratio.
package testsys

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// RepoRoot is the repository's top directory (this package lives two
// levels below it).
func RepoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testsys: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// BuildDir is where make put the CLI, the libraries and the sample apps:
// $ROCPROF_GO_BUILD (the Makefile exports it), else <repo>/build.
func BuildDir(t testing.TB) string {
	if d := os.Getenv("ROCPROF_GO_BUILD"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(t), "build")
}

// Artifact is a build product below BuildDir; a missing one fails the test
// with the make target that builds it (never a skip).
func Artifact(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(BuildDir(t), rel)
	_, err := os.Stat(p)
	require.NoError(t, err, "%s is missing: run `make test` (it builds the CLI, the libraries, the sample apps and the ROCm matrix)", p)
	return p
}

// SecondUserName is the local account the tests create to play another
// user of the machine.
const SecondUserName = "rpg-test-other"

// SecondUser returns the second local account, creating it the first time.
func SecondUser(t testing.TB) (uid, gid int) {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "this test plays a second local user: run it as root (CI does)")
	u, err := user.Lookup(SecondUserName)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SecondUserName).CombinedOutput()
		require.NoError(t, err, "useradd: %s", out)
		u, err = user.Lookup(SecondUserName)
		require.NoError(t, err)
	}
	uid, err = strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err = strconv.Atoi(u.Gid)
	require.NoError(t, err)
	return uid, gid
}

// SharedDir makes a directory every user may create entries in, with the
// sticky bit as /tmp has (a shared output directory), named "shared" in a
// new directory of the test's that every user can reach: where the second
// user (SecondUser) plants what they like. Its parent is the test's own,
// for what only this user writes beside it.
func SharedDir(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, os.ModeSticky|0o777))
	return shared
}

// AsUser runs a command as another user in /, with a minimal environment
// plus env, and returns its output; it must succeed.
func AsUser(t testing.TB, uid, gid int, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v as uid %d: %s", name, args, uid, out)
	return string(out)
}

// SmallTmpfs mounts a tmpfs of the given size ("64k", "20m") in a new
// directory of the test's, unmounted when the test ends: a full disk, or a
// container's small /dev/shm.
func SmallTmpfs(t testing.TB, size string) string {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "this test mounts a size-limited tmpfs: run it as root (CI does)")
	mnt := filepath.Join(t.TempDir(), "tmpfs-"+size)
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size="+size+",mode=0755"))
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	return mnt
}

// Bindfs mounts dir again through bindfs (FUSE) in a new directory of the
// test's, unmounted when the test ends: a file system without fallocate
// (as NFSv3 and many FUSE file systems are) over whatever dir is on.
func Bindfs(t testing.TB, dir string) string {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "this test mounts a FUSE file system: run it as root (CI does)")
	mnt := filepath.Join(t.TempDir(), "bindfs")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	out, err := exec.Command("bindfs", dir, mnt).CombinedOutput()
	require.NoError(t, err, "bindfs %s %s: %s (bindfs is in the Makefile's APT_TEST_PACKAGES)", dir, mnt, out)
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	return mnt
}

// Host conditions a test can put a command in: each is the shell commands
// that set it up in a private mount namespace (InMountNamespace), so the
// machine's own mounts never change. Every mount made there stays visible to
// the ROCm roots, which bind /sys, /dev and /tmp recursively.
const (
	// HideCPUCaches empties every /sys/devices/system/cpu/cpuN/cache, as on
	// KVM guests, microVMs and containers whose sysfs has no CPU cache
	// entries (/sys/devices/system/node/nodeM/cpuN links to the same
	// directories, so those go too). An empty directory is what the thunks
	// see of a missing one: no index entry.
	HideCPUCaches = `for d in /sys/devices/system/cpu/cpu[0-9]*/cache; do
  [ -d "$d" ] || continue
  mount -t tmpfs -o size=4k,mode=0555 rpg-no-cpu-cache "$d" || exit 125
done`
	// SmallDevShm gives /dev/shm a private 64 MiB tmpfs, as Docker does.
	SmallDevShm = `mount -t tmpfs -o size=64m,mode=1777 rpg-shm /dev/shm || exit 125`
	// ReadOnlySys makes /sys read-only (a read-only bind of itself, with its
	// submounts), as containers mount it.
	ReadOnlySys = `mount --rbind /sys /sys && mount -o remount,bind,ro /sys || exit 125`
)

// InMountNamespace rewrites cmd (before it starts) to run in a private mount
// namespace after the shell commands setup, which exits 125 when it cannot
// make the condition. cmd keeps its environment, directory and I/O.
func InMountNamespace(cmd *exec.Cmd, setup string) {
	args := append([]string{"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
		setup + "\nexec \"$@\"", "sh", cmd.Path}, cmd.Args[1:]...)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		unshare = "/usr/bin/unshare"
	}
	cmd.Path, cmd.Args = unshare, args
}

// InUserNamespace rewrites cmd (before it starts) to run as a container
// runtime without privileges starts a container: in new user, mount and PID
// namespaces, root inside mapped to the caller. It holds capabilities over
// its own namespaces only (it can still enter a ROCm root); run what stands
// for the container's process under DropSysAdmin.
func InUserNamespace(cmd *exec.Cmd) {
	args := append([]string{"unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc",
		"--", cmd.Path}, cmd.Args[1:]...)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		unshare = "/usr/bin/unshare"
	}
	cmd.Path, cmd.Args = unshare, args
}

// DropSysAdmin is the command prefix that runs a program without
// CAP_SYS_ADMIN: out of the bounding and inheritable sets, so neither the
// program nor anything it execs can hold it.
var DropSysAdmin = []string{"setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", "--"}
