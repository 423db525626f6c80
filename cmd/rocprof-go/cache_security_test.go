package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// Without HOME (cron, systemd, env -i) the library cache is
// $TMPDIR/rocprof-go-<uid>. Another user who creates root's cache first and
// plants a library in it must not get it injected into root's app: the run
// notices, warns, and uses a private copy, which it removes afterwards.
func TestAnotherUsersPlantedCacheIsNotInjected(t *testing.T) {
	uid, gid := testsys.SecondUser(t)
	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky)) // like /tmp
	require.NoError(t, os.Chmod(filepath.Dir(shared), 0o755))
	// Both users run the same binary, a copy the other user can reach
	// whatever the checkout's permissions (a clone in a 0700 directory).
	bin, err := os.ReadFile(shippedBinary(t))
	require.NoError(t, err)
	cli := filepath.Join(shared, "rocprof-go")
	require.NoError(t, os.WriteFile(cli, bin, 0o755))
	marker := filepath.Join(shared, "evil-ran")

	// The attacker learns the cache's name from their own run of the same
	// binary, then builds root's cache with their library in it.
	env := []string{"TMPDIR=" + shared}
	testsys.AsUser(t, uid, gid, env, cli, "--kernel-trace", "-d", filepath.Join(shared, "attacker-out"), "--", "/bin/true")
	theirs, err := filepath.Glob(filepath.Join(shared, "rocprof-go-"+strconv.Itoa(uid), "*"))
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
	testsys.AsUser(t, uid, gid, env, "mkdir", "-p", planted)
	testsys.AsUser(t, uid, gid, env, "chmod", "0777", filepath.Join(shared, "rocprof-go-0"), planted)
	for _, lib := range []string{"librocprof-go-preload.so", "librocprof-go-shim.so"} {
		testsys.AsUser(t, uid, gid, env, "gcc", "-shared", "-fPIC", "-o", filepath.Join(planted, lib), src)
	}
	testsys.AsUser(t, uid, gid, env, "touch", filepath.Join(planted, ".complete"))

	// Root runs with no HOME.
	out := filepath.Join(shared, "root-out")
	cmd := exec.Command(cli, "--kernel-trace", "-d", out, "-o", "run", "--", "/bin/true")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + shared}
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	require.NoFileExists(t, marker, "the planted library ran: %s", msg)
	require.Contains(t, string(msg), "rocprof-go: warning: the library cache "+filepath.Join(shared, "rocprof-go-0")+
		" cannot be trusted (owned by uid "+strconv.Itoa(uid)+", not by you (uid 0)): remove it, or set XDG_CACHE_HOME")
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
	require.False(t, strings.Contains(string(msg), "library cache"), "no cache warning: %s", msg)
	fi, err := os.Lstat(filepath.Join(shared, "rocprof-go-0"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoFileExists(t, marker)
}
