package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// Issue 31: every directory a run creates or loads from is on a path no
// other local user can change, or the run refuses it. These tests play the
// other user (created by testsys.SecondUser) racing root's run: an
// attacker process watches a shared directory with inotify and, the moment
// root creates something there, renames it aside and puts its own in its
// place.

// attackerSource is the other user's program: attacker MODE DIR EVIL VICTIM
// LOG. MODE libs: swap a new rocprof-go-libs-* directory for one of its own
// and replace each library root writes into it by EVIL (a hard link).
// MODE run: swap a new rocprof-go-run-* directory for one of its own with
// `owner` a link to VICTIM and a pass_1 of its own, and each pass_N root
// creates in it for one of its own. Every step is logged.
const attackerSource = `#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

static FILE *lg;
static const char *libs[] = {"librocprof-go-preload.so", "librocprof-go-shim.so", "librocprof-go-vgpu.so"};

static int theirs(const char *p) {
  struct stat st;
  return lstat(p, &st) == 0 && st.st_uid != getuid();
}

static void plant(const char *d, const char *name, const char *evil) {
  char p[PATH_MAX], q[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", d, name);
  if (theirs(p)) {
    snprintf(q, sizeof q, "%s.root", p);
    if (rename(p, q) != 0) { fprintf(lg, "cannot move %s: %s\n", p, strerror(errno)); return; }
  }
  if (link(evil, p) == 0) fprintf(lg, "planted %s\n", p);
}

int main(int argc, char **argv) {
  if (argc != 6) return 2;
  const char *mode = argv[1], *dir = argv[2], *evil = argv[3], *victim = argv[4];
  lg = fopen(argv[5], "a");
  if (!lg) return 3;
  setvbuf(lg, NULL, _IOLBF, 0);
  const char *prefix = strcmp(mode, "libs") == 0 ? "rocprof-go-libs-" : "rocprof-go-run-";
  int in = inotify_init1(0);
  int top = inotify_add_watch(in, dir, IN_CREATE);
  if (in < 0 || top < 0) { fprintf(lg, "inotify: %s\n", strerror(errno)); return 4; }
  fprintf(lg, "watching %s\n", dir);
  char swapped[64][PATH_MAX];
  int wds[64], n = 0;
  char buf[1 << 16] __attribute__((aligned(8)));
  for (;;) {
    ssize_t len = read(in, buf, sizeof buf);
    if (len <= 0) continue;
    for (char *ptr = buf; ptr < buf + len;) {
      struct inotify_event *ev = (struct inotify_event *)ptr;
      ptr += sizeof *ev + ev->len;
      if (!ev->len) continue;
      char p[PATH_MAX], q[PATH_MAX];
      if (ev->wd == top) {
        if (strncmp(ev->name, prefix, strlen(prefix)) != 0 || n == 64) continue;
        snprintf(p, sizeof p, "%s/%s", dir, ev->name);
        if (!theirs(p)) continue;
        snprintf(q, sizeof q, "%s/.aside-%s", dir, ev->name);
        if (rename(p, q) != 0) { fprintf(lg, "cannot move %s aside: %s\n", p, strerror(errno)); continue; }
        mkdir(p, 0777);
        chmod(p, 0777);
        fprintf(lg, "swapped %s\n", p);
        if (strcmp(mode, "run") == 0) {
          snprintf(q, sizeof q, "%s/owner", p);
          if (symlink(victim, q) == 0) fprintf(lg, "planted %s -> %s\n", q, victim);
          /* root may have made its pass_1 already: the app gets this one */
          snprintf(q, sizeof q, "%s/pass_1", p);
          if (mkdir(q, 0777) == 0 && chmod(q, 0777) == 0) fprintf(lg, "planted %s\n", q);
        }
        strcpy(swapped[n], p);
        wds[n++] = inotify_add_watch(in, p, IN_CREATE | IN_CLOSE_WRITE);
        continue;
      }
      for (int i = 0; i < n; i++) {
        if (ev->wd != wds[i]) continue;
        snprintf(p, sizeof p, "%s/%s", swapped[i], ev->name);
        if (strcmp(mode, "libs") == 0 && (ev->mask & IN_CLOSE_WRITE)) {
          /* root wrote a library: it and every one before it become ours */
          for (int k = 0; k < 2; k++) {
            plant(swapped[i], libs[k], evil);
            if (strcmp(ev->name, libs[k]) == 0) break;
          }
        } else if (strcmp(mode, "run") == 0 && (ev->mask & IN_CREATE) && theirs(p)) {
          fprintf(lg, "root created %s in my directory\n", p);
          if (strncmp(ev->name, "pass_", 5) == 0) {
            snprintf(q, sizeof q, "%s.root", p);
            if (rename(p, q) == 0 && mkdir(p, 0777) == 0 && chmod(p, 0777) == 0) fprintf(lg, "swapped %s\n", p);
          }
        }
      }
    }
  }
}
`

// evilSource is the other user's library: it leaves a mark when it runs.
func evilSource(marker string) string {
	return `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
  FILE *f = fopen("` + marker + `", "a");
  if (f) { fprintf(f, "evil library ran as uid %d\n", (int)getuid()); fclose(f); }
}
`
}

// hostile is a shared directory and the other user's tools in it.
type hostile struct {
	uid, gid int
	shared   string // 0755, root's: the tools, the CLI's copy
	dir      string // where the attacker works
	cli      string
	attacker string // the attacker's program
	evil     string // the attacker's library
	marker   string // written by the evil library when it runs
	victim   string // a root-only file the attacker aims at
}

func newHostile(t *testing.T) *hostile {
	t.Helper()
	uid, gid := testsys.SecondUser(t)
	h := &hostile{uid: uid, gid: gid, shared: t.TempDir()}
	require.NoError(t, os.Chmod(h.shared, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(h.shared), 0o755))
	bin, err := os.ReadFile(shippedBinary(t))
	require.NoError(t, err)
	h.cli = filepath.Join(h.shared, "rocprof-go")
	require.NoError(t, os.WriteFile(h.cli, bin, 0o755))
	h.dir = filepath.Join(h.shared, "open")
	require.NoError(t, os.Mkdir(h.dir, 0o755))
	require.NoError(t, os.Chmod(h.dir, 0o777))
	src := filepath.Join(h.shared, "attacker.c")
	require.NoError(t, os.WriteFile(src, []byte(attackerSource), 0o644))
	h.attacker = filepath.Join(h.shared, "attacker")
	out, err := exec.Command("cc", "-O2", "-o", h.attacker, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	h.marker = filepath.Join(h.shared, "marker")
	require.NoError(t, os.WriteFile(h.marker, nil, 0o666))
	require.NoError(t, os.Chmod(h.marker, 0o666))
	evilSrc := filepath.Join(h.shared, "evil.c")
	require.NoError(t, os.WriteFile(evilSrc, []byte(evilSource(h.marker)), 0o644))
	// The attacker's own library, in the attacker's own directory beside
	// the shared one (a hard link needs the same file system).
	h.evil = filepath.Join(h.dir, ".evil.so")
	testsys.AsUser(t, uid, gid, nil, "cc", "-shared", "-fPIC", "-o", h.evil, evilSrc)
	h.victim = filepath.Join(h.shared, "victim")
	require.NoError(t, os.WriteFile(h.victim, []byte("root's secret\n"), 0o600))
	return h
}

// start runs the attacker as the other user until the test ends and
// returns its log's path.
func (h *hostile) start(t *testing.T, mode string) string {
	t.Helper()
	log := filepath.Join(h.shared, "attacker-"+mode+".log")
	require.NoError(t, os.WriteFile(log, nil, 0o666))
	require.NoError(t, os.Chmod(log, 0o666))
	cmd := exec.Command(h.attacker, mode, h.dir, h.evil, h.victim, log)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(h.uid), Gid: uint32(h.gid)}}
	require.NoError(t, cmd.Start())
	ended := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(ended)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ended
	})
	// Watching before root starts.
	waitLog(t, log, "watching", ended)
	return log
}

// waitLog waits until the attacker's log holds want (it logs each step as
// it takes it), failing if the attacker ends or a minute passes.
func waitLog(t *testing.T, log, want string, ended <-chan struct{}) {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(readLog(t, log), want) {
		select {
		case <-ended:
			t.Fatalf("the attacker ended: %s", readLog(t, log))
		case <-deadline:
			t.Fatalf("the attacker's log never said %q: %s", want, readLog(t, log))
		case <-tick.C:
		}
	}
}

func (h *hostile) noEvil(t *testing.T, msg []byte) {
	t.Helper()
	b, err := os.ReadFile(h.marker)
	require.NoError(t, err)
	require.Empty(t, string(b), "the other user's library ran: %s", msg)
	b, err = os.ReadFile(h.victim)
	require.NoError(t, err)
	require.Equal(t, "root's secret\n", string(b), "root's file was overwritten")
}

func readLog(t *testing.T, log string) string {
	t.Helper()
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	return string(b)
}

// No HOME (cron, services) and a TMPDIR others can write without the sticky
// bit: the cache there is refused, and so is every other use of that TMPDIR.
// Before: the private copy of the libraries was unpacked there, the other
// user swapped its directory and root ran their library, exit 0.
func TestFallbackLibrariesAreNotInAnUntrustedTMPDIR(t *testing.T) {
	h := newHostile(t)
	log := h.start(t, "libs")
	cmd := exec.Command(h.cli, "--kernel-trace", "-d", filepath.Join(h.shared, "out"), "-o", "run", "--", "/bin/true")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + h.dir}
	cmd.Dir = h.shared
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	h.noEvil(t, msg)
	l := readLog(t, log)
	require.NotContains(t, l, "swapped", "the private copy went to the untrusted TMPDIR: %s\n%s", l, msg)
	require.Contains(t, string(msg), "rocprof-go: warning: the library cache "+h.dir+" cannot be trusted (writable by others (mode 0777) without the sticky bit)")
	require.Contains(t, string(msg), "using a private copy in /tmp/rocprof-go-libs-")
	left, err := filepath.Glob("/tmp/rocprof-go-libs-*")
	require.NoError(t, err)
	for _, l := range left {
		fi, err := os.Stat(l)
		require.NoError(t, err)
		require.NotEqual(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, "root's private copy %s is removed after the run", l)
	}
}

// A spool root (ROCPROF_GO_SPOOL_ROOT, or TMPDIR) that others can write
// without the sticky bit is refused before anything is created in it.
// Before: the run directory was made there and used by path; the other
// user swapped it (and its pass directory) for theirs, with `owner` a link
// to a root-only file, and root wrote through it. With the sticky bit the
// run goes on, and the other user can no longer move root's directory.
func TestRunDirectoryIsNotInAnUntrustedSpoolRoot(t *testing.T) {
	h := newHostile(t)
	log := h.start(t, "run")
	app := []string{"/bin/true"}
	run := func(env ...string) ([]byte, error) {
		cmd := exec.Command(h.cli, append([]string{"--kernel-trace", "-d", filepath.Join(h.shared, "out"), "-o", "run", "--"}, app...)...)
		cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "XDG_CACHE_HOME=" + filepath.Join(h.shared, "cache")}, env...)
		cmd.Dir = h.shared
		return cmd.CombinedOutput()
	}
	msg, err := run("ROCPROF_GO_SPOOL_ROOT=" + h.dir)
	h.noEvil(t, msg)
	l := readLog(t, log)
	require.NotContains(t, l, "swapped", "root's run directory was replaced by the other user's: %s\n%s", l, msg)
	require.Error(t, err, "a spool root others can change is refused: %s", msg)
	require.Contains(t, string(msg), "the spool root "+h.dir+" will not be used: "+h.dir+
		" cannot be trusted (writable by others (mode 0777) without the sticky bit): another user could replace the run's directory in it; set ROCPROF_GO_SPOOL_ROOT=DIR")

	// TMPDIR, when it would be chosen for room, is passed over.
	msg, err = run("TMPDIR=" + h.dir)
	require.NoError(t, err, "%s", msg)
	h.noEvil(t, msg)
	require.NotContains(t, readLog(t, log), "swapped", "%s", msg)

	// Sticky, like /tmp: used, and the other user cannot move root's
	// directory out of it.
	// The app ends once the attacker has acted on root's directory (at most
	// 30 s), so that it acts while the directory is in use.
	require.NoError(t, os.Chmod(h.dir, 0o777|os.ModeSticky))
	app = []string{"/bin/sh", "-c", `i=0; until grep -q rocprof-go-run- "$0" || [ $i -ge 3000 ]; do sleep 0.01; i=$((i+1)); done`, log}
	msg, err = run("ROCPROF_GO_SPOOL_ROOT=" + h.dir)
	require.NoError(t, err, "%s", msg)
	h.noEvil(t, msg)
	// The attacker saw root's directory and could not move it.
	l = readLog(t, log)
	require.NotContains(t, l, "swapped", "%s", msg)
	require.Contains(t, l, "cannot move "+h.dir+"/rocprof-go-run-")
	require.Contains(t, l, "aside: Operation not permitted")
}

// A relative ROCPROF_GO_LIBDIR (the README's build/lib) is made absolute:
// LD_PRELOAD names the libraries the CLI checked, whatever directory the
// app's processes change to. Before: a child that changed directory loaded
// the other user's library found there under the same relative path.
func TestRelativeLibDirIsMadeAbsolute(t *testing.T) {
	h := newHostile(t)
	work := filepath.Join(h.shared, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "build"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(buildDir(), "lib"), filepath.Join(work, "build", "lib")))
	// The other user's directory holds build/lib with their library.
	theirs := filepath.Join(h.dir, "theirs")
	testsys.AsUser(t, h.uid, h.gid, nil, "mkdir", "-p", filepath.Join(theirs, "build", "lib"))
	for _, lib := range []string{"librocprof-go-preload.so", "librocprof-go-shim.so"} {
		testsys.AsUser(t, h.uid, h.gid, nil, "cp", h.evil, filepath.Join(theirs, "build", "lib", lib))
	}
	cmd := exec.Command(h.cli, "--kernel-trace", "-d", filepath.Join(h.shared, "out"), "-o", "run", "--",
		"/bin/sh", "-c", "cd "+theirs+" && exec /bin/true")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "ROCPROF_GO_LIBDIR=build/lib"}
	cmd.Dir = work
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	h.noEvil(t, msg)

	// A library directory others can change is refused, naming it.
	require.NoError(t, os.Chmod(h.dir, 0o777))
	cmd = exec.Command(h.cli, "--kernel-trace", "-d", filepath.Join(h.shared, "out"), "-o", "run", "--", "/bin/true")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "ROCPROF_GO_LIBDIR=" + filepath.Join(theirs, "build", "lib")}
	msg, err = cmd.CombinedOutput()
	require.Error(t, err, "%s", msg)
	require.Contains(t, string(msg), "ROCPROF_GO_LIBDIR="+filepath.Join(theirs, "build", "lib")+": "+h.dir+
		" cannot be trusted (writable by others (mode 0777) without the sticky bit): another user could put their libraries there")
	h.noEvil(t, msg)
}
