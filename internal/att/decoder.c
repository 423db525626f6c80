#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "decoder.h"
#include "_cgo_export.h"

int rpg_td_open(const char *path, rpg_td_lib *lib, char *err, int errlen)
{
    memset(lib, 0, sizeof(*lib));
    lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
        const char *e = dlerror();
        snprintf(err, (size_t)errlen, "%s", e ? e : "dlopen failed");
        return -1;
    }
    lib->parse = (rpg_td_parse_fn)dlsym(lib->handle, "rocprof_trace_decoder_parse_data");
    lib->info_string = (rpg_td_string_fn)dlsym(lib->handle, "rocprof_trace_decoder_get_info_string");
    lib->status_string = (rpg_td_string_fn)dlsym(lib->handle, "rocprof_trace_decoder_get_status_string");
    if (!lib->parse) {
        snprintf(err, (size_t)errlen, "%s has no rocprof_trace_decoder_parse_data", path);
        dlclose(lib->handle);
        lib->handle = NULL;
        return -1;
    }
    return 0;
}

void rpg_td_close(rpg_td_lib *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    lib->handle = NULL;
}

/* What the three callbacks share: the data, handed out once, and Go's handle. */
typedef struct rpg_td_ctx {
    const uint8_t *data;
    uint64_t size;
    int given;
    uintptr_t go;
} rpg_td_ctx;

static uint64_t rpg_td_se_data(uint8_t **buffer, uint64_t *buffer_size, void *userdata)
{
    rpg_td_ctx *c = (rpg_td_ctx *)userdata;
    if (c->given || c->size == 0) {
        *buffer = NULL;
        *buffer_size = 0;
        return 0;
    }
    c->given = 1;
    *buffer = (uint8_t *)c->data;
    *buffer_size = c->size;
    return c->size;
}

static int rpg_td_trace(int record_type, void *events, uint64_t n, void *userdata)
{
    rpg_td_ctx *c = (rpg_td_ctx *)userdata;
    return rpgTdTrace(c->go, record_type, events, n);
}

static int rpg_td_isa(char *instruction, uint64_t *memory_size, uint64_t *size, rpg_td_pc address,
                      void *userdata)
{
    rpg_td_ctx *c = (rpg_td_ctx *)userdata;
    return rpgTdISA(c->go, instruction, memory_size, size, address.addr, address.marker_id);
}

int rpg_td_parse(rpg_td_lib *lib, const uint8_t *data, uint64_t size, uintptr_t ctx)
{
    rpg_td_ctx c = {data, size, 0, ctx};
    return lib->parse(rpg_td_se_data, rpg_td_trace, rpg_td_isa, &c);
}

const char *rpg_td_info_string(rpg_td_lib *lib, int info)
{
    return lib->info_string ? lib->info_string(info) : NULL;
}

const char *rpg_td_status_string(rpg_td_lib *lib, int status)
{
    return lib->status_string ? lib->status_string(status) : NULL;
}
