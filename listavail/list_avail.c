/*
 * librocprofv3-list-avail.so for rocprof-go: rocprofiler-sdk's list-avail
 * C ABI (the functions rocprofv3_avail_module calls through ctypes), answered
 * from rocprof-go's counter listing. Plain C, no Go runtime: on the first
 * call the library runs `rocprofv3 avail --format records` (the rocprof-go
 * executable installed beside it) and keeps what it printed. The format is
 * described in cmd/rocprof-go/availrecords.go and docs/rocprofiler-compute.md.
 *
 * The executable is, in order: $RPG_LIST_AVAIL_EXE; PREFIX/bin/rocprofv3 for
 * a library in PREFIX/lib/rocprofiler-sdk/ or PREFIX/lib/; rocprof-go on
 * PATH. The child inherits the caller's environment, so
 * ROCPROFILER_METRICS_PATH (rocprofiler-compute sets it before listing) and
 * rocprof-go's config file (virtual_gpu) apply.
 *
 * Handles: an agent's is its KFD node id; a counter's is
 * (agent slot + 1) << 32 | its position in that agent's listing, so every
 * counter of every agent has its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
    uint64_t id;
    uint64_t instances;
    char *name;
} la_dim;

typedef struct {
    char *name, *description, *block, *expression;
    uint8_t derived, constant;
    la_dim *dims;
    size_t ndims;
} la_counter;

/* A PC-sampling configuration, in rocprofiler-sdk's enum numbers (the
 * records carry them so). */
typedef struct {
    uint64_t method, unit, min_interval, max_interval, flags;
} la_pcs;

typedef struct {
    uint64_t handle;
    char *json;
    la_counter *counters;
    size_t ncounters, cap;
    la_pcs *pcs;
    size_t npcs;
} la_agent;

static struct {
    la_agent *agents;
    size_t nagents;
    bool loaded;
} la;

static pthread_once_t la_once = PTHREAD_ONCE_INIT;
static const char la_empty[] = "";

static void la_fatal(const char *what) {
    fprintf(stderr, "librocprofv3-list-avail (rocprof-go): %s\n", what);
}

/* Unescapes a field in place: \t \n \r \\ . */
static char *la_unescape(char *s) {
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            *o++ = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return s;
}

/* Splits line into at most max tab-separated fields; returns their number. */
static size_t la_split(char *line, char **f, size_t max) {
    size_t n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = 0;
        p = t + 1;
    }
    return n;
}

static char *la_dup(const char *s) {
    char *d = strdup(la_unescape((char *)s));
    return d ? d : (char *)la_empty;
}

static void la_parse_line(char *line) {
    char *f[9];
    size_t n = la_split(line, f, 9);
    if (n == 3 && strcmp(f[0], "agent") == 0) {
        la_agent *a = realloc(la.agents, (la.nagents + 1) * sizeof *a);
        if (!a) return;
        la.agents = a;
        a = &la.agents[la.nagents++];
        memset(a, 0, sizeof *a);
        a->handle = strtoull(f[1], NULL, 10);
        a->json = la_dup(f[2]);
    } else if (n == 8 && strcmp(f[0], "counter") == 0 && la.nagents > 0) {
        la_agent *a = &la.agents[la.nagents - 1];
        if (a->ncounters == a->cap) {
            size_t cap = a->cap ? 2 * a->cap : 256;
            la_counter *c = realloc(a->counters, cap * sizeof *c);
            if (!c) return;
            a->counters = c;
            a->cap = cap;
        }
        la_counter *c = &a->counters[a->ncounters++];
        memset(c, 0, sizeof *c);
        c->derived = (uint8_t)atoi(f[2]);
        c->constant = (uint8_t)atoi(f[3]);
        c->name = la_dup(f[4]);
        c->description = la_dup(f[5]);
        c->block = la_dup(f[6]);
        c->expression = la_dup(f[7]);
    } else if (n == 7 && strcmp(f[0], "pcs") == 0 && la.nagents > 0) {
        la_agent *a = &la.agents[la.nagents - 1];
        la_pcs *p = realloc(a->pcs, (a->npcs + 1) * sizeof *p);
        if (!p) return;
        a->pcs = p;
        p = &a->pcs[a->npcs++];
        p->method = strtoull(f[2], NULL, 10);
        p->unit = strtoull(f[3], NULL, 10);
        p->min_interval = strtoull(f[4], NULL, 10);
        p->max_interval = strtoull(f[5], NULL, 10);
        p->flags = strtoull(f[6], NULL, 10);
    } else if (n == 4 && strcmp(f[0], "dim") == 0 && la.nagents > 0 && la.agents[la.nagents - 1].ncounters > 0) {
        la_agent *a = &la.agents[la.nagents - 1];
        la_counter *c = &a->counters[a->ncounters - 1];
        la_dim *d = realloc(c->dims, (c->ndims + 1) * sizeof *d);
        if (!d) return;
        c->dims = d;
        d = &c->dims[c->ndims++];
        d->id = strtoull(f[1], NULL, 10);
        d->instances = strtoull(f[2], NULL, 10);
        d->name = la_dup(f[3]);
    }
}

/* The rocprof-go executable: see the file's comment. */
static int la_find_exe(char *out, size_t size) {
    const char *env = getenv("RPG_LIST_AVAIL_EXE");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return 0;
    }
    Dl_info info;
    if (dladdr((void *)&la_find_exe, &info) && info.dli_fname) {
        char lib[PATH_MAX];
        if (realpath(info.dli_fname, lib)) {
            static const char *const rel[] = {"/../../bin/rocprofv3", "/../bin/rocprofv3",
                                              "/../../bin/rocprof-go", "/../bin/rocprof-go"};
            char *slash = strrchr(lib, '/');
            if (slash) *slash = 0;
            for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
                char cand[PATH_MAX + 32];
                snprintf(cand, sizeof cand, "%s%s", lib, rel[i]);
                if (access(cand, X_OK) == 0) {
                    snprintf(out, size, "%s", cand);
                    return 0;
                }
            }
        }
    }
    snprintf(out, size, "rocprof-go");
    return 0;
}

static void la_load(void) {
    char exe[PATH_MAX + 32];
    la_find_exe(exe, sizeof exe);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        la_fatal("pipe failed");
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        la_fatal("fork failed");
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        char *argv[] = {exe, "avail", "--format", "records", NULL};
        execvp(exe, argv);
        fprintf(stderr, "librocprofv3-list-avail (rocprof-go): cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    bool header = false;
    while (in && (len = getline(&line, &cap, in)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (!header) {
            header = strncmp(line, "rocprof-go-list-avail ", 22) == 0;
            continue;
        }
        la_parse_line(line);
    }
    free(line);
    if (in) fclose(in); else close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!header || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char msg[PATH_MAX + 96];
        snprintf(msg, sizeof msg, "`%s avail --format records` failed (exit %d): no agents listed", exe,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        la_fatal(msg);
    }
    la.loaded = true;
}

static void la_init(void) { pthread_once(&la_once, la_load); }

static la_agent *la_agent_of(uint64_t handle) {
    la_init();
    for (size_t i = 0; i < la.nagents; i++)
        if (la.agents[i].handle == handle) return &la.agents[i];
    return NULL;
}

static la_counter *la_counter_of(uint64_t handle) {
    la_init();
    uint64_t slot = handle >> 32, idx = handle & 0xffffffffu;
    if (slot == 0 || slot > la.nagents) return NULL;
    la_agent *a = &la.agents[slot - 1];
    return idx < a->ncounters ? &a->counters[idx] : NULL;
}

EXPORT size_t get_number_of_agents(void) {
    la_init();
    return la.nagents;
}

EXPORT void agent_handles(uint64_t *handles, size_t num_agents) {
    la_init();
    for (size_t i = 0; i < num_agents && i < la.nagents; i++) handles[i] = la.agents[i].handle;
}

/* Declared by rocprofiler-sdk's header; its library does not define it. */
EXPORT uint64_t get_agent_id(uint64_t agent_handle, int id_type) {
    (void)id_type;
    return agent_handle;
}

EXPORT void agent_info(uint64_t agent_handle, const char **agent_info_str) {
    la_agent *a = la_agent_of(agent_handle);
    *agent_info_str = a ? a->json : "{}";
}

EXPORT size_t get_number_of_agent_counters(uint64_t agent_handle) {
    la_agent *a = la_agent_of(agent_handle);
    return a ? a->ncounters : 0;
}

EXPORT void agent_counter_handles(uint64_t *handles, uint64_t agent_handle, size_t n) {
    la_agent *a = la_agent_of(agent_handle);
    if (!a) return;
    uint64_t slot = (uint64_t)(a - la.agents) + 1;
    for (size_t i = 0; i < n && i < a->ncounters; i++) handles[i] = slot << 32 | i;
}

EXPORT void counter_info(uint64_t handle, const char **name, const char **description, uint8_t *is_derived,
                         uint8_t *is_hw_constant) {
    la_counter *c = la_counter_of(handle);
    *name = c ? c->name : la_empty;
    *description = c ? c->description : la_empty;
    *is_derived = c ? c->derived : 0;
    *is_hw_constant = c ? c->constant : 0;
}

EXPORT void counter_block(uint64_t handle, const char **block) {
    la_counter *c = la_counter_of(handle);
    *block = c ? c->block : la_empty;
}

EXPORT void counter_expression(uint64_t handle, const char **expr) {
    la_counter *c = la_counter_of(handle);
    *expr = c ? c->expression : la_empty;
}

EXPORT size_t get_number_of_dimensions(uint64_t handle) {
    la_counter *c = la_counter_of(handle);
    return c ? c->ndims : 0;
}

EXPORT void counter_dimension_ids(uint64_t handle, uint64_t *ids, size_t n) {
    la_counter *c = la_counter_of(handle);
    for (size_t i = 0; c && i < n && i < c->ndims; i++) ids[i] = c->dims[i].id;
}

EXPORT void counter_dimension(uint64_t handle, uint64_t dimension, const char **name, uint64_t *instances) {
    la_counter *c = la_counter_of(handle);
    for (size_t i = 0; c && i < c->ndims; i++) {
        if (c->dims[i].id == dimension) {
            *name = c->dims[i].name;
            *instances = c->dims[i].instances;
            return;
        }
    }
}

/* The agent's PC-sampling configurations, as `rocprofv3 avail` lists them
 * (the runtime's, asked by a probe; none on a runtime without PC
 * sampling): method, unit and flags in rocprofiler-sdk's enum numbers. An
 * index past the last leaves the outputs alone. */
EXPORT size_t get_number_of_pc_sample_configs(uint64_t agent_handle) {
    la_agent *a = la_agent_of(agent_handle);
    return a ? a->npcs : 0;
}

EXPORT void pc_sample_config(uint64_t agent_handle, uint64_t idx, uint64_t *method, uint64_t *unit,
                             uint64_t *min_interval, uint64_t *max_interval, uint64_t *flags) {
    la_agent *a = la_agent_of(agent_handle);
    if (!a || idx >= a->npcs) return;
    const la_pcs *p = &a->pcs[idx];
    *method = p->method;
    *unit = p->unit;
    *min_interval = p->min_interval;
    *max_interval = p->max_interval;
    *flags = p->flags;
}

/* True when every handle is a counter of the agent. Whether the set fits
 * the agent's counter registers in one pass is not checked here (the run
 * checks it before the app starts and prints a valid split). */
EXPORT bool is_counter_set(const uint64_t *handles, uint64_t agent_handle, size_t n) {
    la_agent *a = la_agent_of(agent_handle);
    if (!a) return false;
    uint64_t slot = (uint64_t)(a - la.agents) + 1;
    for (size_t i = 0; i < n; i++)
        if (handles[i] >> 32 != slot || (handles[i] & 0xffffffffu) >= a->ncounters) return false;
    return true;
}
