// tables.cpp: the runtime's HSA API tables, by version.
//
// OnLoad receives tables whose slot order depends on the runtime: ROCm 5.2
// hands out major version 1 of every table, ROCm 6 and 7 major 2 (3 for the
// root), and the AMD extension table of major 2 moved 32 of major 1's slots.
// api_table.h (generated from the headers of every runtime of the test
// matrix) gives each table major its slot order as function ids; the shim
// finds a function's slot by id, never by a struct offset, so one build
// serves every runtime. Within a major, newer runtimes only append, so a
// table's reported size (minor_id) bounds how many slots of the known layout
// it holds; a major this build does not know is refused loudly.
//
// A function the shim's own headers (ROCm 5.2.3's) declare gets a tracer of
// its exact type. A function only newer runtimes have gets a generic one:
// the generator checked that its arguments and result travel in integer
// registers, so a tracer taking and returning 64-bit words forwards them
// unchanged.
#include <stdio.h>
#include <string.h>

#include <type_traits>
#include <utility>

#include "api_table.h"
#include "shim_internal.hpp"

// The recorder's hot path, inlined (see onload.cpp).
#define RPG_INLINE_FOREIGN 1
extern "C" {
#include "preload/rpg_internal.h"
}

namespace {

struct TableInfo {
    const char *name; // for messages
    const rpg_api_layout *layouts;
    size_t nlayouts;
};

#define LAYOUTS(l) l, sizeof l / sizeof(rpg_api_layout)
const TableInfo kTables[SHIM_NTABLES] = {
    {"core", LAYOUTS(RPG_HSA_CORE_FUNCS_LAYOUTS)},
    {"AMD extension", LAYOUTS(RPG_HSA_AMD_EXT_FUNCS_LAYOUTS)},
    {"image extension", LAYOUTS(RPG_HSA_IMAGE_EXT_FUNCS_LAYOUTS)},
    {"finalizer extension", LAYOUTS(RPG_HSA_FINALIZER_EXT_FUNCS_LAYOUTS)},
};
#undef LAYOUTS
// The API domain each table's records carry, and the switch that turns it on.
constexpr uint32_t kDomain[SHIM_NTABLES] = {RPG_API_HSA_CORE, RPG_API_HSA_AMD_EXT,
                                            RPG_API_HSA_IMAGE_EXT, RPG_API_HSA_FINALIZE_EXT};
constexpr uint32_t kBit[SHIM_NTABLES] = {RPG_DOMAIN_HSA_CORE, RPG_DOMAIN_HSA_AMD_EXT,
                                         RPG_DOMAIN_HSA_IMAGE_EXT, RPG_DOMAIN_HSA_FINALIZER_EXT};

constexpr uint32_t kMaxFuncs = 256;
static_assert(RPG_HSA_CORE_FUNCS_COUNT <= kMaxFuncs && RPG_HSA_AMD_EXT_FUNCS_COUNT <= kMaxFuncs,
              "function ids exceed the slot maps");

struct Table {
    ApiTableVersion *base; // the runtime's table (its version header first)
    uint32_t nslots;       // slots of the known layout the runtime has
    const rpg_api_layout *layout;
    int16_t slot[kMaxFuncs]; // function id -> slot, -1 when absent
    void *original[kMaxFuncs];
};
Table g_tables[SHIM_NTABLES];

// ---- tracers -------------------------------------------------------------------

// The preload library's begin (parent and new correlation ids, start time)
// and end (end time and the record), inlined: no call into the preload
// library unless a record takes its slow path.
template <uint32_t Dom, uint32_t Bit, uint32_t Id, typename F> struct Typed;

template <uint32_t Dom, uint32_t Bit, uint32_t Id, typename R, typename... A>
struct Typed<Dom, Bit, Id, R (*)(A...)> {
    static R (*real)(A...);

    static R fn(A... a)
    {
        if (__builtin_expect(!(rpg_domains & Bit), 1))
            return real(a...);
        rpg_api_span s;
        rpg__api_begin_fast(&s);
        if constexpr (std::is_void_v<R>) {
            real(a...);
            rpg__api_end_fast(&s, RPG_KIND_HSA_API, Dom, Id);
        } else {
            R r = real(a...);
            rpg__api_end_fast(&s, RPG_KIND_HSA_API, Dom, Id);
            return r;
        }
    }
};

template <uint32_t Dom, uint32_t Bit, uint32_t Id, typename R, typename... A>
R (*Typed<Dom, Bit, Id, R (*)(A...)>::real)(A...);

template <size_t> using word = uint64_t;

template <uint32_t Dom, uint32_t Bit, uint32_t Id, typename Seq> struct Tracer;

template <uint32_t Dom, uint32_t Bit, uint32_t Id, size_t... I>
struct Tracer<Dom, Bit, Id, std::index_sequence<I...>> {
    using F = uint64_t (*)(word<I>...);
    static F real;

    // A void function returns whatever its rax held, which its caller
    // ignores.
    static uint64_t fn(word<I>... a)
    {
        if (__builtin_expect(!(rpg_domains & Bit), 1))
            return real(a...);
        rpg_api_span s;
        rpg__api_begin_fast(&s);
        uint64_t r = real(a...);
        rpg__api_end_fast(&s, RPG_KIND_HSA_API, Dom, Id);
        return r;
    }
};

template <uint32_t Dom, uint32_t Bit, uint32_t Id, size_t... I>
typename Tracer<Dom, Bit, Id, std::index_sequence<I...>>::F
    Tracer<Dom, Bit, Id, std::index_sequence<I...>>::real;

struct TracerSlot {
    void *fn;
    void **real;
};
TracerSlot g_tracers[SHIM_NTABLES][kMaxFuncs];

template <int T, uint32_t Id, typename F> void add_typed()
{
    using Tr = Typed<kDomain[T], kBit[T], Id, F>;
    g_tracers[T][Id] = {(void *)&Tr::fn, (void **)&Tr::real};
}

template <int T, uint32_t Id, int N, uint32_t Base> void add_generic()
{
    if constexpr (Id >= Base && N >= 0) {
        using Tr = Tracer<kDomain[T], kBit[T], Id, std::make_index_sequence<N>>;
        g_tracers[T][Id] = {(void *)&Tr::fn, (void **)&Tr::real};
    }
}

void add_tracers()
{
#define X_CORE(id, name, n) add_typed<SHIM_CORE, id, decltype(CoreApiTable::name##_fn)>();
#define X_AMD(id, name, n) add_typed<SHIM_AMD, id, decltype(AmdExtTable::name##_fn)>();
#define X_IMG(id, name, n) add_typed<SHIM_IMAGE, id, decltype(ImageExtTable::name##_fn)>();
#define X_FIN(id, name, n) add_typed<SHIM_FINALIZER, id, decltype(FinalizerExtTable::name##_fn)>();
    RPG_HSA_CORE_FUNCS_BASE(X_CORE)
    RPG_HSA_AMD_EXT_FUNCS_BASE(X_AMD)
    RPG_HSA_IMAGE_EXT_FUNCS_BASE(X_IMG)
    RPG_HSA_FINALIZER_EXT_FUNCS_BASE(X_FIN)
#undef X_CORE
#undef X_AMD
#undef X_IMG
#undef X_FIN
#define X_CORE(id, name, n) add_generic<SHIM_CORE, id, n, RPG_HSA_CORE_FUNCS_BASE_COUNT>();
#define X_AMD(id, name, n) add_generic<SHIM_AMD, id, n, RPG_HSA_AMD_EXT_FUNCS_BASE_COUNT>();
#define X_IMG(id, name, n) add_generic<SHIM_IMAGE, id, n, RPG_HSA_IMAGE_EXT_FUNCS_BASE_COUNT>();
#define X_FIN(id, name, n) add_generic<SHIM_FINALIZER, id, n, RPG_HSA_FINALIZER_EXT_FUNCS_BASE_COUNT>();
    RPG_HSA_CORE_FUNCS(X_CORE)
    RPG_HSA_AMD_EXT_FUNCS(X_AMD)
    RPG_HSA_IMAGE_EXT_FUNCS(X_IMG)
    RPG_HSA_FINALIZER_EXT_FUNCS(X_FIN)
#undef X_CORE
#undef X_AMD
#undef X_IMG
#undef X_FIN
}

const rpg_api_layout *find_layout(int t, uint32_t major)
{
    for (size_t i = 0; i < kTables[t].nlayouts; i++)
        if (kTables[t].layouts[i].major == major)
            return &kTables[t].layouts[i];
    return nullptr;
}

void list_majors(int t, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < kTables[t].nlayouts && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%u", i ? ", " : "", kTables[t].layouts[i].major);
}

// Copies the slots of the functions both the headers the shim is built with
// (ROCm 5.2.3's: ids 0..BASE_COUNT-1, in their struct order) and the runtime
// know into a struct of those headers' type.
template <typename S> void fill_base(S *dst, int t, uint32_t base_count)
{
    static_assert(sizeof(ApiTableVersion) == 16, "a table is a 16-byte version, then pointers");
    memset(dst, 0, sizeof *dst);
    void **slots = (void **)((char *)dst + sizeof(ApiTableVersion));
    for (uint32_t id = 0; id < base_count; id++)
        slots[id] = g_tables[t].original[id];
}

} // namespace

static_assert(sizeof(CoreApiTable) == 16 + 8 * RPG_HSA_CORE_FUNCS_BASE_COUNT,
              "the shim's headers are not ROCm 5.2.3's: regenerate api_table.h");
static_assert(sizeof(AmdExtTable) == 16 + 8 * RPG_HSA_AMD_EXT_FUNCS_BASE_COUNT,
              "the shim's headers are not ROCm 5.2.3's: regenerate api_table.h");

void **shim_slot(int t, uint32_t id)
{
    Table &tb = g_tables[t];
    if (!tb.base || id >= kMaxFuncs || tb.slot[id] < 0)
        return nullptr;
    return (void **)((char *)tb.base + sizeof(ApiTableVersion)) + tb.slot[id];
}

void *shim_original(int t, uint32_t id)
{
    return id < kMaxFuncs ? g_tables[t].original[id] : nullptr;
}

bool shim_tables_open(HsaApiTable *root, char *why, size_t whylen)
{
    static const uint32_t root_majors[] = RPG_HSA_ROOT_MAJORS;
    bool root_ok = false;
    for (uint32_t m : root_majors)
        root_ok |= root && root->version.major_id == m;
    // The root holds the version, then the core, AMD, finalizer and image
    // table pointers in every known major.
    if (!root_ok || root->version.minor_id < sizeof(ApiTableVersion) + 4 * sizeof(void *)) {
        snprintf(why, whylen, "the HSA API root table has version %u.%u, which this build does not know",
                 root ? root->version.major_id : 0, root ? root->version.minor_id : 0);
        return false;
    }
    ApiTableVersion *tabs[SHIM_NTABLES] = {
        (ApiTableVersion *)root->core_, (ApiTableVersion *)root->amd_ext_,
        (ApiTableVersion *)root->image_ext_, (ApiTableVersion *)root->finalizer_ext_};
    memset(g_tables, 0, sizeof g_tables);
    for (int t = 0; t < SHIM_NTABLES; t++) {
        Table &tb = g_tables[t];
        memset(tb.slot, 0xff, sizeof tb.slot);
        ApiTableVersion *v = tabs[t];
        if (!v)
            continue;
        const rpg_api_layout *l = find_layout(t, v->major_id);
        if (!l) {
            char majors[64];
            list_majors(t, majors, sizeof majors);
            snprintf(why, whylen,
                     "the HSA runtime's %s API table has major version %u (step %u), which this "
                     "build does not know (it knows %s)",
                     kTables[t].name, v->major_id, v->step_id, majors);
            if (t == SHIM_CORE || t == SHIM_AMD)
                return false;
            continue; // image and finalizer: just untraced
        }
        uint32_t have = v->minor_id > sizeof(ApiTableVersion)
                            ? (uint32_t)((v->minor_id - sizeof(ApiTableVersion)) / sizeof(void *))
                            : 0;
        tb.base = v;
        tb.layout = l;
        tb.nslots = have < l->count ? have : l->count;
        void **slots = (void **)((char *)v + sizeof(ApiTableVersion));
        for (uint32_t s = 0; s < tb.nslots; s++) {
            tb.slot[l->ids[s]] = (int16_t)s;
            tb.original[l->ids[s]] = slots[s];
        }
    }
    fill_base(&shim_core, SHIM_CORE, RPG_HSA_CORE_FUNCS_BASE_COUNT);
    fill_base(&shim_amd, SHIM_AMD, RPG_HSA_AMD_EXT_FUNCS_BASE_COUNT);
    if (!shim_core.hsa_iterate_agents_fn || !shim_core.hsa_agent_get_info_fn) {
        snprintf(why, whylen, "the HSA runtime's core API table lacks functions every version has");
        return false;
    }
    return true;
}

void shim_tables_wrap(uint64_t wrapped[SHIM_NTABLES], uint64_t known[SHIM_NTABLES])
{
    add_tracers();
    for (int t = 0; t < SHIM_NTABLES; t++) {
        Table &tb = g_tables[t];
        if (!tb.base)
            continue;
        void **slots = (void **)((char *)tb.base + sizeof(ApiTableVersion));
        for (uint32_t s = 0; s < tb.nslots; s++) {
            uint32_t id = tb.layout->ids[s];
            if (!slots[s])
                continue;
            known[t]++;
            TracerSlot &tr = g_tracers[t][id];
            if (!tr.fn)
                continue; // a newer function taking a struct by value: none so far
            *tr.real = slots[s];
            slots[s] = tr.fn;
            wrapped[t]++;
        }
    }
}

void shim_tables_describe(char *buf, size_t n)
{
    size_t o = 0;
    for (int t = 0; t < SHIM_NTABLES && o < n; t++) {
        const Table &tb = g_tables[t];
        o += (size_t)snprintf(buf + o, n - o, "%s%s %u.%u (%u slots)", t ? ", " : "", kTables[t].name,
                              tb.base ? tb.base->major_id : 0, tb.base ? tb.base->step_id : 0,
                              tb.nslots);
    }
}
