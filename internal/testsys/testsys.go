// Package testsys holds the system fixtures of the tests that play a hostile
// or unlucky environment: a second local user, a small file system. They
// need root, as CI runs the tests; run as another user they fail, naming
// why, rather than skip.
package testsys

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

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
