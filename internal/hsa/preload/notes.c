/*
 * notes.c: the run's report channel. The CLI opens one notes file per pass
 * (O_APPEND, in the pass's private directory) and hands it to the app as an
 * inherited descriptor, ROCPROF_GO_NOTES_FD=FD:DEV:INO. A process that loses
 * its records where the CLI cannot see it writes one line there with
 * write(2):
 *
 *   - it could not create or map its spool (the app changed its user with
 *     setuid, runs in a private /dev/shm or mount namespace, the file system
 *     is full): every record it would have made is lost;
 *   - it execs (or posix_spawns) a program with an environment that lost the
 *     profiler (LD_PRELOAD without this library, or no ROCPROF_GO_SPOOL_DIR):
 *     that image records nothing;
 *   - such an exec failed (the previous line is void).
 *
 * A descriptor, not a path: it still works after setuid, in another mount
 * namespace and after a chdir. It is not close-on-exec, since the app's
 * children need it; a process whose launcher closed it (Python's subprocess
 * closes every descriptor but 0-2) opens the notes file by path in its
 * constructor, close-on-exec. Before each write the descriptor's identity
 * (device, inode) is checked, so an app that closed it and reused the
 * number never gets a line in its own file.
 *
 * Line format (one write, at most NOTE_MAX bytes, tab-separated key=value,
 * read by internal/launch/notes.go):
 *   rpg-note v=1 kind=spool|exec|spawn|exec-failed pid= ppid= errno= stage=
 *   uid= euid= start_euid= comm= path=
 *
 * Cost: nothing on the recording path; the constructor of a recording
 * process parses one variable and makes one fstat; an exec checks its
 * environment for two variables.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach_internal.h"
#include "notes.h"
#include "rpg_env_gen.h"

#define NOTES_FILE "notes"
#define NOTE_MAX 1024

extern char **environ;

static int g_on; /* this process records: its execs are checked */
static int g_fd = -1;
static int g_fd_owned; /* g_fd was opened here (by path), not inherited */
static dev_t g_dev;
static ino_t g_ino;
static uid_t g_start_euid;
static char g_path[PATH_MAX]; /* the notes file, for a process that lost the descriptor */
static char g_self[256];      /* this library's file name, as LD_PRELOAD lists it */

static int same_file(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == g_dev && st.st_ino == g_ino;
}

static unsigned long long parse_u(const char **s)
{
    unsigned long long v = 0;
    while (**s >= '0' && **s <= '9')
        v = v * 10 + (unsigned long long)(*(*s)++ - '0');
    return v;
}

/* Opens the notes file by path (close-on-exec, moved out of the low
 * numbers), keeping it only when it is the CLI's file. */
static int open_by_path(void)
{
    if (!g_path[0])
        return -1;
    int fd = open(g_path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 512);
    if (hi >= 0) {
        close(fd);
        fd = hi;
    }
    if (!same_file(fd)) {
        close(fd);
        return -1;
    }
    return fd;
}

void rpg__notes_init(const char *spool_dir)
{
    const char *v = rpg_env(RPG_ENV_GO_NOTES_FD);
    if (!v || !*v)
        return;
    const char *s = v;
    unsigned long long fd = parse_u(&s);
    if (*s++ != ':')
        return;
    g_dev = (dev_t)parse_u(&s);
    if (*s++ != ':')
        return;
    g_ino = (ino_t)parse_u(&s);
    if (*s || fd > INT_MAX)
        return;
    size_t dl = strlen(spool_dir);
    if (dl + sizeof "/" NOTES_FILE < sizeof g_path) {
        memcpy(g_path, spool_dir, dl);
        memcpy(g_path + dl, "/" NOTES_FILE, sizeof "/" NOTES_FILE);
    }
    if (same_file((int)fd)) {
        g_fd = (int)fd;
    } else {
        g_fd = open_by_path();
        g_fd_owned = g_fd >= 0;
    }
    g_start_euid = geteuid();
    Dl_info di;
    if (dladdr((void *)rpg__notes_init, &di) && di.dli_fname) {
        const char *b = strrchr(di.dli_fname, '/');
        b = b ? b + 1 : di.dli_fname;
        if (strlen(b) < sizeof g_self)
            strcpy(g_self, b);
    }
    g_on = 1;
}

/* An attached library's detach: the descriptor it opened goes with it. */
void rpg__notes_finish(void)
{
    if (g_fd >= 0 && g_fd_owned && same_file(g_fd))
        close(g_fd);
    g_fd = -1;
    g_fd_owned = 0;
    g_on = 0;
}

/* ---- one line, formatted without stdio (async-signal safe) --------------- */

typedef struct {
    char *p, *end;
} line;

static void put(line *l, const char *s)
{
    for (; s && *s && l->p < l->end; s++)
        *l->p++ = (*s == '\t' || *s == '\n') ? '?' : *s;
}

static void put_sep(line *l)
{
    if (l->p < l->end)
        *l->p++ = '\t';
}

static void put_num(line *l, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? -(unsigned long long)v : (unsigned long long)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) && n < (int)sizeof tmp);
    if (v < 0 && l->p < l->end)
        *l->p++ = '-';
    while (n > 0 && l->p < l->end)
        *l->p++ = tmp[--n];
}

static void field(line *l, const char *key, const char *val)
{
    put_sep(l);
    put(l, key);
    put(l, "=");
    put(l, val);
}

static void field_num(line *l, const char *key, long long v)
{
    put_sep(l);
    put(l, key);
    put(l, "=");
    put_num(l, v);
}

static void note(const char *kind, int pid, int err, const char *stage, const char *path)
{
    int saved = errno;
    int fd = g_fd;
    if (!same_file(fd)) {
        fd = open_by_path(); /* the app closed it: it may still be reachable */
        if (fd < 0) {
            errno = saved;
            return;
        }
        g_fd = fd;
        g_fd_owned = 1;
    }
    char buf[NOTE_MAX];
    line l = {buf, buf + sizeof buf - 1};
    put(&l, "rpg-note");
    field(&l, "v", "1");
    field(&l, "kind", kind);
    field_num(&l, "pid", pid);
    field_num(&l, "ppid", getppid());
    field_num(&l, "errno", err);
    field(&l, "stage", stage);
    field_num(&l, "uid", getuid());
    field_num(&l, "euid", geteuid());
    field_num(&l, "start_euid", g_start_euid);
    field(&l, "comm", program_invocation_short_name);
    field(&l, "path", path);
    *l.p++ = '\n';
    ssize_t r;
    do
        r = write(fd, buf, (size_t)(l.p - buf));
    while (r < 0 && errno == EINTR);
    errno = saved;
}

void rpg__note_spool_failed(int err, const char *stage, const char *dir)
{
    if (g_on)
        note("spool", (int)getpid(), err, stage, dir);
}

/* ---- execs that drop the profiler ---------------------------------------- */

/* Whether an image started with envp records: LD_PRELOAD still lists this
 * library and ROCPROF_GO_SPOOL_DIR is set. */
static int env_profiled(char *const envp[])
{
    int preload = 0, spool = 0;
    size_t sl = strlen(g_self);
    for (char *const *e = envp; e && *e; e++) {
        const char *kv = *e;
        if (!strncmp(kv, "LD_PRELOAD=", 11)) {
            for (const char *p = kv + 11; *p;) {
                const char *q = p;
                while (*q && *q != ':' && *q != ' ')
                    q++;
                const char *b = p;
                for (const char *r = p; r < q; r++)
                    if (*r == '/')
                        b = r + 1;
                if (sl && (size_t)(q - b) == sl && !memcmp(b, g_self, sl))
                    preload = 1;
                p = *q ? q + 1 : q;
            }
        } else if (!strncmp(kv, RPG_ENV_GO_SPOOL_DIR "=", sizeof RPG_ENV_GO_SPOOL_DIR) &&
                   kv[sizeof RPG_ENV_GO_SPOOL_DIR]) {
            spool = 1;
        }
    }
    return preload && spool;
}

/* Notes an exec whose image will not record; returns whether it did. */
static int note_exec(const char *path, char *const envp[])
{
    if (!g_on || env_profiled(envp))
        return 0;
    note("exec", (int)getpid(), 0, "", path);
    return 1;
}

static void note_exec_failed(int noted, const char *path)
{
    if (noted)
        note("exec-failed", (int)getpid(), errno, "", path);
}

typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);

/* execve is the system call itself: no dlsym, so that it is safe in a
 * vfork child (Python's subprocess execs from one). */
__attribute__((visibility("default"))) int execve(const char *path, char *const argv[], char *const envp[])
{
    int noted = note_exec(path, envp);
    long r = syscall(SYS_execve, path, argv, envp);
    note_exec_failed(noted, path);
    return (int)r;
}

__attribute__((visibility("default"))) int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execvpe(const char *file, char *const argv[], char *const envp[])
{
    static execvpe_fn real;
    if (!real)
        real = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int noted = note_exec(file, envp);
    int r = real(file, argv, envp);
    note_exec_failed(noted, file);
    return r;
}

__attribute__((visibility("default"))) int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* execl, execlp, execle: their arguments as an array on the stack. */
#define ARGV_FROM_VA(first, ap, argv, extra)                                                               \
    size_t n_ = 1;                                                                                         \
    va_start(ap, first);                                                                                   \
    while (va_arg(ap, char *))                                                                             \
        n_++;                                                                                              \
    va_end(ap);                                                                                            \
    char *argv[n_ + 1];                                                                                    \
    argv[0] = (char *)first;                                                                               \
    va_start(ap, first);                                                                                   \
    for (size_t i_ = 1; i_ <= n_; i_++)                                                                    \
        argv[i_] = va_arg(ap, char *);                                                                     \
    extra;                                                                                                 \
    va_end(ap)

__attribute__((visibility("default"))) int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    ARGV_FROM_VA(arg, ap, argv, (void)0);
    return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    ARGV_FROM_VA(arg, ap, argv, (void)0);
    return execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char *const *envp;
    ARGV_FROM_VA(arg, ap, argv, envp = va_arg(ap, char *const *));
    return execve(path, argv, envp);
}

static int spawn(const char *name, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    spawn_fn real = (spawn_fn)dlsym(RTLD_NEXT, name);
    if (!real)
        return ENOSYS;
    pid_t child = 0;
    int r = real(&child, path, fa, attr, argv, envp);
    if (pid)
        *pid = child;
    if (r == 0 && g_on && !env_profiled(envp))
        note("spawn", (int)child, 0, "", path);
    return r;
}

__attribute__((visibility("default"))) int posix_spawn(pid_t *pid, const char *path,
                                                       const posix_spawn_file_actions_t *fa,
                                                       const posix_spawnattr_t *attr, char *const argv[],
                                                       char *const envp[])
{
    return spawn("posix_spawn", pid, path, fa, attr, argv, envp);
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t *pid, const char *file,
                                                        const posix_spawn_file_actions_t *fa,
                                                        const posix_spawnattr_t *attr, char *const argv[],
                                                        char *const envp[])
{
    return spawn("posix_spawnp", pid, file, fa, attr, argv, envp);
}
