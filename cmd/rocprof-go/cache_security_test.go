package main

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// otherUser returns a second local account for the tests that play a
// hostile user, creating it (as root, as CI runs) the first time.
func otherUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "this test creates a second local user: run it as root (CI does)")
	const name = "rpg-test-other"
	u, err := user.Lookup(name)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		require.NoError(t, err, "useradd: %s", out)
		u, err = user.Lookup(name)
		require.NoError(t, err)
	}
	id, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	g, err := strconv.Atoi(u.Gid)
	require.NoError(t, err)
	return uint32(id), uint32(g)
}

// asUser runs a command as another user, in a clean environment plus env.
func asUser(t *testing.T, uid, gid uint32, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v as uid %d: %s", name, args, uid, out)
	return string(out)
}

// Without HOME (cron, systemd, env -i) the library cache is
// $TMPDIR/rocprof-go-<uid>. Another user who creates root's cache first and
// plants a library in it must not get it injected into root's app: the run
// notices, warns, and uses a private copy, which it removes afterwards.
func TestAnotherUsersPlantedCacheIsNotInjected(t *testing.T) {
	uid, gid := otherUser(t)
	cli := shippedBinary(t)
	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky)) // like /tmp
	require.NoError(t, os.Chmod(filepath.Dir(shared), 0o755))
	marker := filepath.Join(shared, "evil-ran")

	// The attacker learns the cache's name from their own run of the same
	// binary, then builds root's cache with their library in it.
	env := []string{"TMPDIR=" + shared}
	asUser(t, uid, gid, env, cli, "--kernel-trace", "-d", filepath.Join(shared, "attacker-out"), "--", "/bin/true")
	theirs, err := filepath.Glob(filepath.Join(shared, "rocprof-go-"+strconv.Itoa(int(uid)), "*"))
	require.NoError(t, err)
	require.Len(t, theirs, 1, "the attacker's own cache")
	hash := filepath.Base(theirs[0])
	src := filepath.Join(shared, "evil.c")
	require.NoError(t, os.WriteFile(src, []byte(`#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
  FILE *f = fopen("`+marker+`", "a");
  if (f) { fprintf(f, "evil preload ran as uid %d\n", (int)getuid()); fclose(f); }
}
`), 0o644))
	planted := filepath.Join(shared, "rocprof-go-0", hash)
	asUser(t, uid, gid, env, "mkdir", "-p", planted)
	asUser(t, uid, gid, env, "chmod", "0777", filepath.Join(shared, "rocprof-go-0"), planted)
	for _, lib := range []string{"librocprof-go-preload.so", "librocprof-go-shim.so"} {
		asUser(t, uid, gid, env, "gcc", "-shared", "-fPIC", "-o", filepath.Join(planted, lib), src)
	}
	asUser(t, uid, gid, env, "touch", filepath.Join(planted, ".complete"))

	// Root runs with no HOME.
	out := filepath.Join(shared, "root-out")
	cmd := exec.Command(cli, "--kernel-trace", "-d", out, "-o", "run", "--", "/bin/true")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + shared}
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	require.NoFileExists(t, marker, "the planted library ran: %s", msg)
	require.Contains(t, string(msg), "rocprof-go: warning: the library cache "+filepath.Join(shared, "rocprof-go-0")+
		" cannot be trusted (owned by uid "+strconv.Itoa(int(uid))+", not by you (uid 0)): remove it, or set XDG_CACHE_HOME")
	require.FileExists(t, filepath.Join(out, "run.json"))
	left, err := filepath.Glob(filepath.Join(shared, "rocprof-go-libs-*"))
	require.NoError(t, err)
	require.Empty(t, left, "the private copy is removed after the run")

	// With the planted directory gone, root's own cache is created private.
	require.NoError(t, os.RemoveAll(filepath.Join(shared, "rocprof-go-0")))
	cmd = exec.Command(cli, "--kernel-trace", "-d", out, "-o", "run", "--", "/bin/true")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + shared}
	msg, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	require.False(t, strings.Contains(string(msg), "warning"), "%s", msg)
	fi, err := os.Lstat(filepath.Join(shared, "rocprof-go-0"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoFileExists(t, marker)
}
