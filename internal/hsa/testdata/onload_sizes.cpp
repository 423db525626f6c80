// onload_sizes: calls the shim's OnLoad with API tables shorter and longer
// than the ones its headers describe (an older and a newer runtime) and
// checks that it replaces every slot both sides know and nothing else.
// Usage: onload_sizes SHIM.so short|long ; prints "ok <wrapped>" and exits 0.
//        onload_sizes SHIM.so unknown ; a root table of a major version no
//        runtime has: OnLoad must decline; prints "declined", exits 0.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <hsa_api_trace.h>

static hsa_status_t no_agents(hsa_status_t (*)(hsa_agent_t, void *), void *) { return HSA_STATUS_SUCCESS; }
static hsa_status_t sys_info(hsa_system_info_t, void *v)
{
    *(uint64_t *)v = 1000000000ull;
    return HSA_STATUS_SUCCESS;
}
static hsa_status_t no_ext(uint16_t, uint16_t, size_t, void *) { return HSA_STATUS_ERROR; }
static void never(void) {}

#define SENTINEL ((void *)0x5e5e5e5e5e5e5e5eull)
#define SPARE 16

template <typename T> struct Padded {
    T t;
    void *spare[SPARE];
};

// Fills every function slot of the first `n` bytes with `never`, the rest
// (up to the padding's end) with SENTINEL.
template <typename T> void fill(Padded<T> *p, uint32_t n)
{
    void **slots = (void **)((char *)&p->t + sizeof(ApiTableVersion));
    size_t total = (sizeof(T) - sizeof(ApiTableVersion)) / sizeof(void *) + SPARE;
    for (size_t i = 0; i < total; i++) {
        size_t end = sizeof(ApiTableVersion) + (i + 1) * sizeof(void *);
        slots[i] = end <= n ? (void *)never : SENTINEL;
    }
    p->t.version.major_id = 1;
    p->t.version.minor_id = n;
}

// Counts replaced slots; fails on a touched slot past min(n, sizeof(T)).
template <typename T> int check(Padded<T> *p, uint32_t n, const char *name, int *replaced)
{
    void **slots = (void **)((char *)&p->t + sizeof(ApiTableVersion));
    size_t total = (sizeof(T) - sizeof(ApiTableVersion)) / sizeof(void *) + SPARE;
    size_t known = (n < sizeof(T) ? n : sizeof(T));
    for (size_t i = 0; i < total; i++) {
        size_t end = sizeof(ApiTableVersion) + (i + 1) * sizeof(void *);
        if (end <= known) {
            if (slots[i] != (void *)never)
                (*replaced)++;
        } else if (slots[i] != SENTINEL && slots[i] != (void *)never) {
            fprintf(stderr, "%s: slot %zu past %zu bytes was changed\n", name, i, known);
            return 1;
        } else if (end > n && slots[i] != SENTINEL) {
            fprintf(stderr, "%s: slot %zu past the table was changed\n", name, i);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    bool longer = !strcmp(argv[2], "long");
    bool unknown = !strcmp(argv[2], "unknown");
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    auto onload = (bool (*)(HsaApiTable *, uint64_t, uint64_t, const char *const *))dlsym(lib, "OnLoad");
    if (!onload)
        return 2;
    static Padded<CoreApiTable> core;
    static Padded<AmdExtTable> amd;
    static Padded<ImageExtTable> img;
    static Padded<FinalizerExtTable> fin;
    // Older runtime: ten functions fewer per table; newer: eight more.
    uint32_t cn = longer ? sizeof(CoreApiTable) + 64 : sizeof(CoreApiTable) - 80;
    uint32_t an = longer ? sizeof(AmdExtTable) + 64 : sizeof(AmdExtTable) - 80;
    uint32_t in = longer ? sizeof(ImageExtTable) + 64 : sizeof(ImageExtTable) - 24;
    uint32_t fn = longer ? sizeof(FinalizerExtTable) + 64 : sizeof(FinalizerExtTable) - 16;
    fill(&core, cn);
    fill(&amd, an);
    fill(&img, in);
    fill(&fin, fn);
    core.t.hsa_iterate_agents_fn = no_agents;
    core.t.hsa_system_get_info_fn = sys_info;
    core.t.hsa_system_get_major_extension_table_fn = no_ext;
    HsaApiTable root;
    root.version = {1, sizeof(HsaApiTable), 0, 0};
    root.core_ = &core.t;
    root.amd_ext_ = &amd.t;
    root.finalizer_ext_ = &fin.t;
    root.image_ext_ = &img.t;
    if (unknown) {
        root.version.major_id = 99;
        if (onload(&root, 99, 0, nullptr)) {
            fprintf(stderr, "OnLoad accepted a root table of major 99\n");
            return 1;
        }
        printf("declined\n");
        return 0;
    }
    if (!onload(&root, 1, 0, nullptr)) {
        fprintf(stderr, "OnLoad declined\n");
        return 1;
    }
    int replaced = 0;
    if (check(&core, cn, "core", &replaced) || check(&amd, an, "amd", &replaced) ||
        check(&img, in, "image", &replaced) || check(&fin, fn, "finalizer", &replaced))
        return 1;
    printf("ok %d\n", replaced);
    return 0;
}
