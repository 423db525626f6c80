/* Run configuration from ROCPROF_VGPU_* environment variables, and the
 * JSON-lines packet log. Bad values make the open of /dev/kfd fail with a
 * message naming the variable, so hsa_init reports an error instead of
 * running a configuration the user did not ask for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgpu.h"

struct vgpu_config vgpu_cfg;
static int log_fd = -1;
static int config_error;

int vgpu_config_failed(void) { return config_error; }

static void bad(const char *var, const char *val, const char *fix) {
  fprintf(stderr, "rocprof-go virtual GPU: %s=%s is invalid: %s\n", var, val, fix);
  config_error = 1;
}

/* Rules look like "glob=factor;glob@gridx=factor": a rule with @GRIDX
 * scales only dispatches of that grid size (one launch shape of a kernel). */
static void parse_scale(const char *v) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", v);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
    char *eq = strrchr(tok, '=');
    char *end = NULL;
    double f = eq ? strtod(eq + 1, &end) : 0;
    if (!eq || eq == tok || !end || *end || f <= 0 || vgpu_cfg.nscale >= 16) {
      bad("ROCPROF_VGPU_KERNEL_SCALE", v,
          "use GLOB[@GRIDX]=FACTOR[;GLOB[@GRIDX]=FACTOR...] with a positive factor, at most 16 rules");
      return;
    }
    *eq = 0;
    uint64_t grid_x = 0;
    char *at = strrchr(tok, '@');
    if (at) {
      char *gend = NULL;
      errno = 0;
      grid_x = strtoull(at + 1, &gend, 10);
      if (at == tok || errno || !gend || *gend || grid_x == 0) {
        bad("ROCPROF_VGPU_KERNEL_SCALE", v, "after @ give the grid size in work-items (x), e.g. *saxpy*@65536=1.1");
        return;
      }
      *at = 0;
    }
    struct vgpu_scale_rule *r = &vgpu_cfg.scale[vgpu_cfg.nscale++];
    snprintf(r->pattern, sizeof r->pattern, "%s", tok);
    r->grid_x = grid_x;
    r->factor = f;
  }
}

static uint64_t parse_u64(const char *var, uint64_t def) {
  const char *v = getenv(var);
  if (!v || !*v) return def;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || *end) {
    bad(var, v, "expected a non-negative integer");
    return def;
  }
  return x;
}

static void config_init_once(void) {
  const char *v = getenv("ROCPROF_VGPU_ARCH");
  vgpu_cfg.arch = vgpu_arch_lookup(v && *v ? v : "gfx90a");
  if (!vgpu_cfg.arch) {
    char fix[320];
    snprintf(fix, sizeof fix, "supported: %s", vgpu_arch_names());
    bad("ROCPROF_VGPU_ARCH", v, fix);
    vgpu_cfg.arch = vgpu_arch_lookup("gfx90a");
  }
  vgpu_cfg.gpus = (unsigned)parse_u64("ROCPROF_VGPU_COUNT", 1);
  if (vgpu_cfg.gpus < 1 || vgpu_cfg.gpus > VGPU_MAX_GPUS) {
    bad("ROCPROF_VGPU_COUNT", getenv("ROCPROF_VGPU_COUNT"), "use 1 to 8");
    vgpu_cfg.gpus = 1;
  }
  v = getenv("ROCPROF_VGPU_CLOCK");
  if (!v || !*v || !strcmp(v, "real")) vgpu_cfg.clock = VGPU_CLOCK_REAL;
  else if (!strcmp(v, "virtual")) vgpu_cfg.clock = VGPU_CLOCK_VIRTUAL;
  else bad("ROCPROF_VGPU_CLOCK", v, "use real (default) or virtual");
  vgpu_cfg.kernel_base_ns = parse_u64("ROCPROF_VGPU_KERNEL_BASE_NS", 2000);
  vgpu_cfg.kernel_wave_ns = parse_u64("ROCPROF_VGPU_KERNEL_WAVE_NS", 8);
  v = getenv("ROCPROF_VGPU_KERNEL_SCALE");
  if (v && *v) parse_scale(v);
  v = getenv("ROCPROF_VGPU_TOPOLOGY_FAULT");
  if (v && *v && !strcmp(v, "no-gpu")) {
    vgpu_cfg.topology_fault = VGPU_FAULT_NO_GPU;
    vgpu_cfg.gpus = 0; /* the tree lists the CPU node alone; no render node opens */
  } else if (v && *v && !strcmp(v, "unreadable")) {
    vgpu_cfg.topology_fault = VGPU_FAULT_UNREADABLE; /* sysfs.c */
  } else if (v && *v && !strcmp(v, "host-cpu-caches")) {
    vgpu_cfg.topology_fault = VGPU_FAULT_HOST_CPU_CACHES; /* topology.c */
  } else if (v && *v) {
    bad("ROCPROF_VGPU_TOPOLOGY_FAULT", v, "use no-gpu, unreadable or host-cpu-caches (tests only)");
  }
  v = getenv("ROCPROF_VGPU_STATS");
  vgpu_cfg.stats = v && *v && strcmp(v, "0");
  v = getenv("ROCPROF_VGPU_VERBOSE");
  vgpu_cfg.verbose = v && *v && strcmp(v, "0");
  v = getenv("ROCPROF_VGPU_LOG");
  if (v && *v) {
    /* %p becomes the pid so forked and exec'd children get their own file. */
    char path[4096];
    size_t o = 0;
    for (const char *p = v; *p && o + 24 < sizeof path; p++) {
      if (p[0] == '%' && p[1] == 'p') {
        o += (size_t)snprintf(path + o, sizeof path - o, "%d", (int)getpid());
        p++;
      } else {
        path[o++] = *p;
      }
    }
    path[o] = 0;
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) bad("ROCPROF_VGPU_LOG", v, strerror(errno));
    vgpu_cfg.log = log_fd >= 0;
  }
  vgpu_logf("{\"type\":\"open\",\"pid\":%d,\"arch\":\"%s\",\"gpus\":%u,\"clock\":\"%s\"}", (int)getpid(),
            vgpu_cfg.arch->name, vgpu_cfg.gpus, vgpu_cfg.clock == VGPU_CLOCK_VIRTUAL ? "virtual" : "real");
}

/* Read on first use by any entry point (a device open, a sysfs path):
 * processes that never touch a GPU pay nothing. */
void vgpu_config_init(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, config_init_once);
}

/* One write(2) per record keeps lines whole across threads and processes. */
static void log_write(const char *fmt, va_list ap) {
  char stackbuf[8192];
  char *buf = stackbuf;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(buf, sizeof stackbuf - 1, fmt, ap);
  if (n >= (int)sizeof stackbuf - 1) {
    buf = malloc((size_t)n + 2);
    if (!buf) {
      va_end(ap2);
      return;
    }
    vsnprintf(buf, (size_t)n + 1, fmt, ap2);
  }
  va_end(ap2);
  buf[n] = '\n';
  ssize_t w = write(log_fd, buf, (size_t)n + 1);
  (void)w;
  if (buf != stackbuf) free(buf);
}

void vgpu_log_write(const char *fmt, ...) {
  if (log_fd < 0) return;
  va_list ap;
  va_start(ap, fmt);
  log_write(fmt, ap);
  va_end(ap);
}

void vgpu_error(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *p = msg; *p; p++)
    if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) *p = '\'';
  if (vgpu_cfg.verbose || log_fd < 0) fprintf(stderr, "rocprof-go virtual GPU: error: %s\n", msg);
  vgpu_logf("{\"type\":\"error\",\"pid\":%d,\"message\":\"%s\"}", (int)getpid(), msg);
}

/* Interfaces the emulation does not serve are answered as a driver without
 * the feature would answer; each is reported once per process so a gap in
 * the emulation is never silent. */
void vgpu_unknown(const char *what, const char *name, const char *answer) {
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  static char seen[64][96];
  static unsigned nseen;
  char key[96];
  snprintf(key, sizeof key, "%s %s", what, name);
  pthread_mutex_lock(&m);
  for (unsigned i = 0; i < nseen; i++)
    if (!strcmp(seen[i], key)) {
      pthread_mutex_unlock(&m);
      return;
    }
  if (nseen < 64) snprintf(seen[nseen++], sizeof seen[0], "%s", key);
  pthread_mutex_unlock(&m);
  fprintf(stderr, "rocprof-go virtual GPU: %s %s is not emulated; answered %s\n", what, name, answer);
  vgpu_logf("{\"type\":\"unknown\",\"pid\":%d,\"what\":\"%s\",\"name\":\"%s\",\"answer\":\"%s\"}",
            (int)getpid(), what, name, answer);
}
