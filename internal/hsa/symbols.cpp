// symbols.cpp: what a frozen executable holds (kernel symbols with their
// descriptor fields, loaded code objects), gathered through the runtime's own
// functions and the loader extension for Go, which owns the symbol table.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.hpp"

namespace {

struct SymCtx {
    shim_symbol *out;
    int cap;
    int n;
};

template <typename T> T sym_info(hsa_executable_symbol_t s, hsa_executable_symbol_info_t attr)
{
    T v{};
    shim_core.hsa_executable_symbol_get_info_fn(s, attr, &v);
    return v;
}

hsa_status_t add_symbol(hsa_executable_t, hsa_executable_symbol_t s, void *data)
{
    SymCtx *c = (SymCtx *)data;
    if (sym_info<hsa_symbol_kind_t>(s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE) != HSA_SYMBOL_KIND_KERNEL)
        return HSA_STATUS_SUCCESS;
    int i = c->n++;
    if (i >= c->cap)
        return HSA_STATUS_SUCCESS;
    shim_symbol *o = &c->out[i];
    memset(o, 0, sizeof *o);
    o->kernel_object = sym_info<uint64_t>(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT);
    o->kernarg_size = sym_info<uint32_t>(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE);
    o->group_segment_size =
        sym_info<uint32_t>(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE);
    o->private_segment_size =
        sym_info<uint32_t>(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE);
    hsa_agent_t agent = sym_info<hsa_agent_t>(s, HSA_EXECUTABLE_SYMBOL_INFO_AGENT);
    const ShimAgent *a = shim_find_agent(agent);
    o->agent_node = a ? a->node : 0;
    uint32_t len = sym_info<uint32_t>(s, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH);
    o->name = (char *)calloc(1, (size_t)len + 1);
    if (o->name && shim_core.hsa_executable_symbol_get_info_fn(s, HSA_EXECUTABLE_SYMBOL_INFO_NAME,
                                                                o->name) == HSA_STATUS_SUCCESS)
        o->name_len = len;
    // Register counts and the entry offset live only in the descriptor; read
    // its host copy (here, at load, since a memory:// code object is gone
    // after the run).
    const void *host = nullptr;
    if (a && o->kernel_object && shim_loader_ok &&
        shim_loader.hsa_ven_amd_loader_query_host_address(
            (const void *)(uintptr_t)o->kernel_object, &host) == HSA_STATUS_SUCCESS &&
        host) {
        shim_decode_descriptor(host, a->gfx_major, a->gfx_minor, &o->vgpr_count, &o->agpr_count,
                               &o->sgpr_count);
        // kernel_code_entry_byte_offset: the descriptor's int64 at byte 16.
        // Within one code object it fits 32 bits; anything else stays 0
        // (unknown) rather than wrapping.
        int64_t entry = 0;
        memcpy(&entry, (const char *)host + 16, sizeof entry);
        if (entry >= INT32_MIN && entry <= INT32_MAX)
            o->entry_offset = (int32_t)entry;
    }
    return HSA_STATUS_SUCCESS;
}

struct CoCtx {
    shim_code_object *out;
    int cap;
    int n;
};

hsa_status_t add_code_object(hsa_executable_t, hsa_loaded_code_object_t lco, void *data)
{
    CoCtx *c = (CoCtx *)data;
    int i = c->n++;
    if (i >= c->cap)
        return HSA_STATUS_SUCCESS;
    shim_code_object *o = &c->out[i];
    memset(o, 0, sizeof *o);
    o->handle = lco.handle;
    auto get = [&](hsa_ven_amd_loader_loaded_code_object_info_t attr, void *v) {
        return shim_loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, attr, v);
    };
    hsa_agent_t agent{0};
    get(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT, &agent);
    const ShimAgent *a = shim_find_agent(agent);
    o->agent_node = a ? a->node : 0;
    get(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE, &o->storage_type);
    get(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE, &o->load_base);
    get(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE, &o->load_size);
    get(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA, &o->load_delta);
    uint32_t len = 0;
    if (get(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH, &len) == HSA_STATUS_SUCCESS) {
        o->uri = (char *)calloc(1, (size_t)len + 1);
        if (o->uri && get(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI, o->uri) ==
                          HSA_STATUS_SUCCESS)
            o->uri_len = len;
    }
    return HSA_STATUS_SUCCESS;
}

} // namespace

extern "C" int shim_executable_symbols(uint64_t exec, shim_symbol *out, int cap)
{
    SymCtx c{out, cap, 0};
    if (!shim_core.hsa_executable_iterate_symbols_fn)
        return 0;
    shim_core.hsa_executable_iterate_symbols_fn(hsa_executable_t{exec}, add_symbol, &c);
    return c.n;
}

extern "C" int shim_executable_code_objects(uint64_t exec, shim_code_object *out, int cap)
{
    CoCtx c{out, cap, 0};
    if (!shim_loader_ok || !shim_loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects)
        return 0;
    shim_loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(hsa_executable_t{exec},
                                                                          add_code_object, &c);
    return c.n;
}
