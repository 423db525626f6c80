/*
 * spool.h: the on-disk layout of a rocprof-go spool file.
 *
 * Shared by the preload library (which writes spools), the cgo shim (which
 * writes through the preload library's rpg_* API) and mirrored by the Go
 * reader in internal/tracing (record.go, spool.go). Changing anything here
 * means bumping RPG_SPOOL_VERSION or the record's version and updating the
 * Go mirror; internal/tracing's abi test compiles this header and compares.
 *
 * One file per process image, created lazily on the first recorded event in
 * $ROCPROF_GO_SPOOL_DIR, named rpg-<pid>-<boottime ns>-<n>.spool (a fork
 * child or a re-exec gets a new name; O_EXCL and <n> settle the rest).
 * Everything is little-endian (the writers only run on x86-64/aarch64 Linux).
 *
 *   file:  | chunk 0: rpg_spool_header + process blob | chunk 1 | chunk 2 | ...
 *   chunk: | rpg_chunk_header | record | record | ... | zero bytes         |
 *
 * The file grows by RPG_SEGMENT_SIZE steps (fallocate, so a full tmpfs is an
 * error instead of SIGBUS; where the file system has no fallocate, FUSE or
 * NFSv3, the segment's zeros are written and synced instead, which reserves
 * its space the same way). Each writing thread owns one RPG_CHUNK_SIZE chunk
 * at a time, handed out by an atomic counter in the header, so records are
 * appended without any atomic read-modify-write on a shared line.
 *
 * A record counts once published: the writer stores the size word first,
 * fills the body, then release-stores the whole 8-byte rpg_rec_hdr with
 * commit == RPG_COMMIT. A reader walking a chunk stops at a zero size word
 * (end of the chunk's data); a record with a size but no commit byte is torn
 * (the process died while writing it): it is skipped by its size and counted.
 */
#ifndef RPG_SPOOL_H
#define RPG_SPOOL_H

#include <stdint.h>

#define RPG_SPOOL_MAGIC 0x4c4f4f5053475052ull /* "RPGSPOOL" little-endian */
#define RPG_CHUNK_MAGIC 0x4b4e4843u           /* "CHNK" */
/* A chunk its writer left for good (it took its next chunk, or its thread
 * exited without handing it on): every record in it is published, and none
 * will be written there again, so the CLI may copy it elsewhere and free its
 * pages (RPG_HEADER_SEALS). Readers accept it wherever RPG_CHUNK_MAGIC is. */
#define RPG_CHUNK_SEALED 0x4c414553u          /* "SEAL" */
#define RPG_SPOOL_VERSION 1u
#define RPG_CHUNK_SIZE (64u * 1024u)
#define RPG_SEGMENT_SIZE (4u * 1024u * 1024u)
#define RPG_COMMIT 0xC5u
/* Largest record a writer accepts; longer strings are truncated to fit. */
#define RPG_MAX_RECORD (RPG_CHUNK_SIZE - 64u)
/* Size of the fixed part of the header; the process blob follows it. */
#define RPG_HEADER_FIXED 1024u

/* Record kinds (rpg_rec_hdr.kind). Values are part of the format. */
enum rpg_kind {
    RPG_KIND_STRING = 1,            /* rpg_string_rec */
    RPG_KIND_HIP_API = 2,           /* rpg_api_rec */
    RPG_KIND_HSA_API = 3,           /* rpg_api_rec */
    RPG_KIND_MARKER = 4,            /* rpg_marker_rec */
    RPG_KIND_KERNEL_DISPATCH = 5,   /* rpg_kernel_dispatch_rec */
    RPG_KIND_MEMORY_COPY = 6,       /* rpg_memory_copy_rec */
    RPG_KIND_MEMORY_ALLOCATION = 7, /* rpg_memory_allocation_rec */
    RPG_KIND_SCRATCH_MEMORY = 8,    /* rpg_scratch_memory_rec */
    RPG_KIND_KERNEL_SYMBOL = 9,     /* rpg_kernel_symbol_rec */
    RPG_KIND_CODE_OBJECT = 10,      /* rpg_code_object_rec */
    RPG_KIND_AGENT_INFO = 11,       /* rpg_agent_info_rec */
    RPG_KIND_COUNTER_SAMPLE = 12,   /* rpg_counter_sample_rec */
    RPG_KIND_THREAD = 13,           /* rpg_thread_rec: the chunk changes owner */
    RPG_KIND_CLOCK = 14,            /* rpg_clock_rec: converts later tick stamps of the chunk */
    RPG_KIND_RCCL_API = 15,         /* rpg_api_rec / rpg_api_rec2, RCCL tail (below) */
    RPG_KIND_PC_SAMPLE = 16,        /* rpg_pc_sample_rec: PC samples (host trap or stochastic) as ROCR delivered them */
    RPG_KIND_PC_SAMPLE_DISPATCH = 17, /* rpg_pc_sample_dispatch_rec: a dispatch's hardware queue slot */
    RPG_KIND_LAST = 18
};

/* API domains: rpg_api_rec.domain and rpg_marker_rec.domain. They double as
 * string-table ids for function names (rpg_string_rec.table). */
enum rpg_api_domain {
    RPG_API_HIP_RUNTIME = 1,
    RPG_API_HIP_COMPILER = 2,
    RPG_API_HSA_CORE = 3,
    RPG_API_HSA_AMD_EXT = 4,
    RPG_API_HSA_IMAGE_EXT = 5,
    RPG_API_HSA_FINALIZE_EXT = 6,
    RPG_API_MARKER_CORE = 7,
    RPG_API_MARKER_CONTROL = 8,
    RPG_API_MARKER_NAME = 9,
    RPG_API_MARKER_CORE_RANGE = 10,
    RPG_API_RCCL = 11 /* rocprofv3's RCCL_API; functions numbered as rocprofiler_rccl_api_id_t */
};

/* String tables beyond the function-name tables (which use rpg_api_domain). */
enum rpg_string_table {
    RPG_STRTAB_COUNTER = 16,   /* counter id -> counter name */
    RPG_STRTAB_DIMENSION = 17, /* dimension id -> dimension name */
    RPG_STRTAB_GENERIC = 18,   /* free-form interned strings */
    RPG_STRTAB_STATUS = 19,    /* rpg_status: what the process's runtime side reported */
    RPG_STRTAB_STREAM = 20,    /* HIP stream number -> rpg_stream_note (binary, 16 bytes) */
    RPG_STRTAB_PERIOD = 21,    /* ROCPROF_COLLECTION_PERIOD_TESTING: a timer step, "label:begin:end" */
    RPG_STRTAB_HOST_FUNCTION = 22 /* a kernel's host stub address -> its device function name */
};

/* The value of an RPG_STRTAB_STREAM string: the hipStream_t a stream number
 * (rpg_kernel_dispatch_rec.stream_id) stands for, and the correlation id of
 * the call that first needed the number. Writers use it to give a recorded
 * hipStream_t argument its stream number (ROCpd's stream_args). */
typedef struct rpg_stream_note {
    uint64_t handle;
    uint64_t correlation_id;
} rpg_stream_note;

/* Status strings (RPG_STRTAB_STATUS): the CLI reads them to tell a domain
 * that could not be collected from one that had nothing to record. */
enum rpg_status {
    RPG_STATUS_HSA_INIT = 1,      /* hsa_init was called (the preload library) */
    RPG_STATUS_SHIM_ATTACHED = 2, /* the shim's OnLoad accepted the runtime; text: the runtime */
    RPG_STATUS_SHIM_DECLINED = 3, /* OnLoad declined; text: why */
    RPG_STATUS_HSA_INIT_FAILED = 4, /* hsa_init failed (the preload library); text: its status */
    RPG_STATUS_HSA_INIT_DIAGNOSIS = 5, /* what the thunk printed when hsa_init ran again with
                                          HSAKMT_DEBUG_LEVEL=3 (a forked probe); text: its lines */
    RPG_STATUS_NO_GPU_AGENT = 6   /* the shim: the HSA runtime found no GPU agent; text: what it found */
};
/* RPG_STATUS_UNAVAILABLE | bit index of an rpg_domain: a requested domain
 * this runtime cannot give; text: why. */
#define RPG_STATUS_UNAVAILABLE (1ull << 32)
/* RPG_STATUS_UNAVAILABLE | this: PC sampling was asked for and could not
 * start (no rpg_domain bit of its own; above them). */
#define RPG_STATUS_PC_SAMPLING_BIT 24

/* Marker functions (rpg_marker_rec.function). For RPG_API_MARKER_CORE_RANGE
 * the three range kinds carry the user's message. */
enum rpg_marker_function {
    RPG_MARKER_MARK = 1,          /* roctxMarkA: start == end */
    RPG_MARKER_THREAD_RANGE = 2,  /* roctxRangePushA..roctxRangePop, merged */
    RPG_MARKER_PROCESS_RANGE = 3, /* roctxRangeStartA..roctxRangeStop, merged */
    RPG_MARKER_RANGE_PUSH = 4,
    RPG_MARKER_RANGE_POP = 5,
    RPG_MARKER_RANGE_START = 6,
    RPG_MARKER_RANGE_STOP = 7,
    RPG_MARKER_GET_THREAD_ID = 8,
    RPG_MARKER_PROFILER_PAUSE = 9,
    RPG_MARKER_PROFILER_RESUME = 10,
    RPG_MARKER_NAME_OS_THREAD = 11,
    RPG_MARKER_NAME_HSA_AGENT = 12,
    RPG_MARKER_NAME_HIP_DEVICE = 13,
    RPG_MARKER_NAME_HIP_STREAM = 14
};

/* Memory copy direction; numbered as the SDK numbers them. */
enum rpg_copy_direction {
    RPG_COPY_HOST_TO_HOST = 1,
    RPG_COPY_HOST_TO_DEVICE = 2,
    RPG_COPY_DEVICE_TO_HOST = 3,
    RPG_COPY_DEVICE_TO_DEVICE = 4
};

enum rpg_alloc_operation {
    RPG_ALLOC_ALLOCATE = 1,
    RPG_ALLOC_VMEM_ALLOCATE = 2,
    RPG_ALLOC_FREE = 3,
    RPG_ALLOC_VMEM_FREE = 4
};

enum rpg_scratch_operation {
    RPG_SCRATCH_ALLOC = 1,
    RPG_SCRATCH_FREE = 2,
    RPG_SCRATCH_ASYNC_RECLAIM = 3
};

enum rpg_agent_type { RPG_AGENT_CPU = 1, RPG_AGENT_GPU = 2 };

enum rpg_code_object_op { RPG_CODE_OBJECT_LOAD = 1, RPG_CODE_OBJECT_UNLOAD = 2 };

/* Process blob sections, each { u32 tag, u32 len, bytes, pad to 8 }. */
enum rpg_blob_tag {
    RPG_BLOB_END = 0,
    RPG_BLOB_ARGV = 1,    /* /proc/self/cmdline: NUL-separated */
    RPG_BLOB_ENVIRON = 2, /* environment: NUL-separated NAME=value */
    RPG_BLOB_CWD = 3,
    RPG_BLOB_HOSTNAME = 4,
    RPG_BLOB_EXE = 5,     /* readlink /proc/self/exe */
    RPG_BLOB_TIMENS = 6   /* /proc/self/timens_offsets ("boottime S NS" lines); absent before Linux 5.6 */
};

/* Chunk 0 of the file. magic is stored last (release): a file without it was
 * never completely created and is ignored. */
typedef struct rpg_spool_header {
    uint64_t magic;             /* RPG_SPOOL_MAGIC */
    uint32_t version;           /* RPG_SPOOL_VERSION */
    uint32_t header_fixed;      /* RPG_HEADER_FIXED */
    uint32_t chunk_size;        /* RPG_CHUNK_SIZE */
    uint32_t segment_size;      /* RPG_SEGMENT_SIZE */
    int32_t pid, ppid, pgid, sid;
    int32_t psize;              /* children of the parent when created, -1 unknown */
    uint32_t blob_size;         /* bytes of process blob after the fixed part */
    uint64_t start_boottime_ns; /* CLOCK_BOOTTIME when the spool was created */
    uint64_t start_realtime_ns; /* CLOCK_REALTIME at the same moment */
    uint64_t chunks_reserved;   /* atomic: chunks handed out, header chunk included */
    uint64_t dropped;           /* atomic: records the writer could not store */
    uint64_t truncated;         /* atomic: records stored with a shortened string */
    uint64_t fork_generation;   /* fork()s between this image and its exec (>= 1 if any) */
    /* Added after version 1 was out, in what was reserved (zero in older
     * spools: flags says whether a writer keeps them). */
    uint64_t chunks_abandoned;  /* atomic: chunks handed out that got no storage (the file
                                   could not grow); their records count in dropped */
    int32_t store_errno;        /* errno of the last failed growth of the file (ENOSPC...), 0 none */
    uint32_t flags;             /* RPG_HEADER_* */
    uint64_t chunks_headed;     /* atomic: chunks whose rpg_chunk_header the writer stored,
                                   the header chunk included (RPG_HEADER_COUNTS_HEADED) */
    uint32_t stop;              /* written by the CLI: RPG_STOP_* bits; while any is set, a
                                   writer takes no new chunk (its records count in dropped) */
    uint32_t stop_seen;         /* atomic: the stop bits a writer obeyed (dropped records for) */
    uint64_t chunk_limit;       /* written by the CLI, 0 = none: a writer takes no chunk once
                                   chunks_reserved reaches it (RPG_STOP_SHM_SHARE in stop_seen),
                                   and prepares none at or past it; the CLI raises it as it
                                   drains, so that memory holds a bounded number of chunks */
    uint8_t reserved[RPG_HEADER_FIXED - 136];
} rpg_spool_header;

/* rpg_spool_header.flags */
#define RPG_HEADER_COUNTS_ABANDONED 1u /* chunks_abandoned and store_errno are kept */
#define RPG_HEADER_COUNTS_HEADED 2u    /* chunks_headed is kept: incremented right after a
                                          chunk's magic is stored, so a chunk counted there
                                          that reads back without its header was lost by the
                                          storage, and one handed out (chunks_reserved) but
                                          never headed (a writer killed while its segment
                                          was being mapped) is not */
#define RPG_HEADER_SEALS 4u            /* chunks left for good are sealed (RPG_CHUNK_SEALED)
                                          and the writer obeys stop */

/* rpg_spool_header.stop, set by the CLI while it drains the spool to the
 * output file system (internal/tracing/drain.go). */
#define RPG_STOP_SHM_SHARE 1u  /* the run's /dev/shm share is used up: cleared when drained */
#define RPG_STOP_OUTPUT_FULL 2u /* the output file system is (nearly) full: for good */

/* A chunk has one writing thread at a time: tid names its first owner, and an
 * rpg_thread_rec names each later one (a thread that took over the chunk of
 * a thread that exited). Records without a tid field of their own (version 2
 * API records) belong to the chunk's owner at their position. */
typedef struct rpg_chunk_header {
    uint32_t magic; /* RPG_CHUNK_MAGIC, stored when the chunk is handed out */
    uint32_t tid;   /* first owner's OS thread id */
    uint64_t index; /* chunk index in the file, for checking */
} rpg_chunk_header;

/* Every record starts with this word; size counts the header and is a multiple
 * of 8; version is the kind's layout version (1 for all kinds, and 2 for the
 * compact API record). */
typedef struct rpg_rec_hdr {
    uint32_t size;
    uint16_t kind;
    uint8_t version;
    uint8_t commit; /* RPG_COMMIT once published */
} rpg_rec_hdr;

/* Interned string: names for ids the reader's own tables may not know. Tail:
 * len bytes, no NUL. */
typedef struct rpg_string_rec {
    rpg_rec_hdr h;
    uint32_t table; /* rpg_api_domain or rpg_string_table */
    uint32_t len;
    uint64_t id;
} rpg_string_rec;

/* HIP (RPG_KIND_HIP_API) and HSA (RPG_KIND_HSA_API) calls. Tail: args_size
 * bytes of argument blob (format owned by the domain's interposer). */
typedef struct rpg_api_rec {
    rpg_rec_hdr h;
    uint32_t domain;   /* rpg_api_domain */
    uint32_t function; /* id in the domain's function table */
    uint32_t tid;
    uint32_t args_size;
    uint64_t correlation_id;
    uint64_t start_ns;
    uint64_t end_ns;
} rpg_api_rec;

/* The compact HIP/HSA call record, version 2 of RPG_KIND_HIP_API and
 * RPG_KIND_HSA_API, written whenever the call fits it (function < 65536,
 * domain < 256, end - start < 2^32 ns; else version 1 is written). The
 * thread is the chunk's owner (rpg_chunk_header, rpg_thread_rec). Tail:
 * size - sizeof(rpg_api_rec2) - args_pad bytes of argument blob.
 *
 * Version 3 has the same layout with start_ns and duration_ns in TSC ticks:
 * the writer skips the conversion (~4 ns of a traced call), the reader
 * converts start and start + duration with the last rpg_clock_rec before
 * the record in its chunk. */
typedef struct rpg_api_rec2 {
    rpg_rec_hdr h;
    uint16_t function;
    uint8_t domain;
    uint8_t args_pad;     /* padding bytes after the argument blob (0-7) */
    uint32_t duration_ns; /* end_ns - start_ns */
    uint64_t correlation_id;
    uint64_t start_ns;
} rpg_api_rec2;

/* RCCL calls (RPG_KIND_RCCL_API, domain RPG_API_RCCL) use the API records
 * above, versions 1 to 3 as HIP's, with function = rocprofv3's
 * rocprofiler_rccl_api_id_t (0 ncclAllGather ... 36 ncclCommDeregister).
 * Their argument blob starts with the rpg_rccl_tail below, then holds every
 * parameter of the call in declaration order, HIP's way: a u32 byte count,
 * the bytes as passed (pointers as addresses, ncclUniqueId's 128 bytes by
 * value), padded to 4. Only the application's calls are recorded: RCCL
 * calling its own API while serving one is not.
 *
 * The RCCL wrapper does not make its call the thread's current correlation
 * id: the HIP calls RCCL makes are traced as HIP calls (as rocprofv3 traces
 * them), and the kernels and copies they cause carry those calls' ids. Ids
 * increase on each thread, so the HIP calls made under an RCCL call are the
 * HIP records of the same thread with correlation_id < id < end_correlation_id. */
typedef struct rpg_rccl_tail {
    uint64_t end_correlation_id; /* the first id the thread drew after the call returned */
} rpg_rccl_tail;

/* The TSC-to-CLOCK_BOOTTIME conversion for version-3 API records after it in
 * the same chunk: ns = this.ns + (ticks - this.tsc) * mult / 2^32 (ticks
 * before tsc count backwards). */
typedef struct rpg_clock_rec {
    rpg_rec_hdr h;
    uint64_t tsc;
    uint64_t ns;
    uint64_t mult; /* ns per tick, 32.32 fixed point */
} rpg_clock_rec;

/* The chunk's writer from here on (see rpg_chunk_header). */
typedef struct rpg_thread_rec {
    rpg_rec_hdr h;
    uint32_t tid;
    uint32_t reserved;
} rpg_thread_rec;

/* ROCTx events, recorded when complete (ranges at their pop/stop with the
 * push/start time as start_ns). Tail: msg_len bytes of message, no NUL. */
typedef struct rpg_marker_rec {
    rpg_rec_hdr h;
    uint32_t domain;   /* RPG_API_MARKER_* */
    uint32_t function; /* rpg_marker_function */
    uint32_t tid;
    uint32_t msg_len;
    uint64_t correlation_id;
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t range_id; /* roctxRangeStartA id, 0 otherwise */
} rpg_marker_rec;

/* Agents are named by their KFD node id throughout; rpg_agent_info_rec maps
 * node ids to logical ids and types. */
typedef struct rpg_kernel_dispatch_rec {
    rpg_rec_hdr h;
    uint32_t agent_node;
    uint32_t tid;
    uint64_t queue_id;
    uint64_t stream_id;
    uint64_t dispatch_id;
    uint64_t kernel_id;
    uint64_t correlation_id;
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t grid[3];
    uint32_t workgroup[3];
    uint32_t group_segment_size;   /* LDS bytes of this dispatch (static + dynamic) */
    uint32_t private_segment_size; /* scratch bytes per work-item */
    uint32_t vgpr_count;
    uint32_t agpr_count;
    uint32_t sgpr_count;
    uint32_t packet_index; /* the packet's slot in the app's queue, low 32 bits (rocprof v1's queue-index) */
} rpg_kernel_dispatch_rec;

typedef struct rpg_memory_copy_rec {
    rpg_rec_hdr h;
    uint32_t direction; /* rpg_copy_direction */
    uint32_t src_agent_node;
    uint32_t dst_agent_node;
    uint32_t tid;
    uint64_t bytes;
    uint64_t stream_id;
    uint64_t correlation_id;
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t src_address;
    uint64_t dst_address;
} rpg_memory_copy_rec;

typedef struct rpg_memory_allocation_rec {
    rpg_rec_hdr h;
    uint32_t operation; /* rpg_alloc_operation */
    uint32_t agent_node;
    uint32_t tid;
    uint32_t reserved;
    uint64_t address;
    uint64_t size;
    uint64_t correlation_id;
    uint64_t start_ns;
    uint64_t end_ns;
} rpg_memory_allocation_rec;

typedef struct rpg_scratch_memory_rec {
    rpg_rec_hdr h;
    uint32_t operation; /* rpg_scratch_operation */
    uint32_t agent_node;
    uint32_t tid;
    uint32_t flags;
    uint64_t queue_id;
    uint64_t size;
    uint64_t correlation_id;
    uint64_t start_ns;
    uint64_t end_ns;
} rpg_scratch_memory_rec;

/* Tail: name_len bytes of the mangled symbol name (".kd" suffix kept). */
typedef struct rpg_kernel_symbol_rec {
    rpg_rec_hdr h;
    uint64_t kernel_id;
    uint64_t code_object_id;
    uint64_t kernel_object; /* code handle used in AQL packets */
    uint32_t kernarg_size;
    uint32_t group_segment_size;   /* static LDS from the descriptor */
    uint32_t private_segment_size; /* static scratch from the descriptor */
    uint32_t vgpr_count;
    uint32_t agpr_count;
    uint32_t sgpr_count;
    uint32_t name_len;
    /* The descriptor's kernel_code_entry_byte_offset (its int64 at byte 16:
     * the entry's distance from the descriptor), 0 when unknown: a real one
     * is never 0 (the descriptor itself is 64 bytes), and spools written
     * before it had a reserved 0 here. */
    int32_t entry_offset;
} rpg_kernel_symbol_rec;

/* Tail: uri_len bytes of the code object URI. */
typedef struct rpg_code_object_rec {
    rpg_rec_hdr h;
    uint64_t code_object_id;
    uint32_t operation; /* rpg_code_object_op */
    uint32_t agent_node;
    uint32_t storage_type;
    uint32_t uri_len;
    uint64_t load_base;
    uint64_t load_size;
    uint64_t load_delta;
    uint64_t timestamp_ns;
} rpg_code_object_rec;

#define RPG_AGENT_NAME_LEN 64

/* One agent, every agent_info.csv column (fields in column order), plus the
 * per-type index used by --agent-index type-relative. */
typedef struct rpg_agent_info_rec {
    rpg_rec_hdr h;
    uint64_t node_id;
    uint64_t logical_node_id;
    uint64_t agent_type; /* rpg_agent_type */
    uint64_t cpu_cores_count;
    uint64_t simd_count;
    uint64_t cpu_core_id_base;
    uint64_t simd_id_base;
    uint64_t max_waves_per_simd;
    uint64_t lds_size_in_kb;
    uint64_t gds_size_in_kb;
    uint64_t num_gws;
    uint64_t wave_front_size;
    uint64_t num_xcc;
    uint64_t cu_count;
    uint64_t array_count;
    uint64_t num_shader_banks;
    uint64_t simd_arrays_per_engine;
    uint64_t cu_per_simd_array;
    uint64_t simd_per_cu;
    uint64_t max_slots_scratch_cu;
    uint64_t gfx_target_version;
    uint64_t vendor_id;
    uint64_t device_id;
    uint64_t location_id;
    uint64_t domain;
    uint64_t drm_render_minor;
    uint64_t num_sdma_engines;
    uint64_t num_sdma_xgmi_engines;
    uint64_t num_sdma_queues_per_engine;
    uint64_t num_cp_queues;
    uint64_t max_engine_clk_ccompute;
    uint64_t max_engine_clk_fcompute;
    uint64_t sdma_fw_version;
    uint64_t fw_version;
    uint64_t capability;
    uint64_t cu_per_engine;
    uint64_t max_waves_per_cu;
    uint64_t family_id;
    uint64_t workgroup_max_size;
    uint64_t grid_max_size;
    uint64_t local_mem_size;
    uint64_t hive_id;
    uint64_t gpu_id;
    uint64_t workgroup_max_dim[3];
    uint64_t grid_max_dim[3];
    uint64_t logical_node_type_id; /* index among agents of the same type */
    char name[RPG_AGENT_NAME_LEN];
    char vendor_name[RPG_AGENT_NAME_LEN];
    char product_name[RPG_AGENT_NAME_LEN];
    char model_name[RPG_AGENT_NAME_LEN];
} rpg_agent_info_rec;

#define RPG_AGENT_NUMERIC_FIELDS 50 /* node_id .. logical_node_type_id */

/* One counter value for one dispatch and one dimension instance. Tail:
 * dim_count rpg_counter_dim entries, then name_len bytes of counter name
 * (may be 0 when an RPG_STRTAB_COUNTER string names counter_id). */
typedef struct rpg_counter_sample_rec {
    rpg_rec_hdr h;
    uint64_t dispatch_id;
    uint64_t counter_id;
    double value;
    uint32_t agent_node;
    uint32_t dim_count;
    uint32_t name_len;
    uint32_t reserved;
} rpg_counter_sample_rec;

typedef struct rpg_counter_dim {
    uint32_t dimension_id;
    uint32_t index;
} rpg_counter_dim;

/* PC sampling (ROCR 6.4+'s hsa_ven_amd_pcs): one batch of the samples one
 * data_ready callback delivered for the agent, as ROCR hands them (64 bytes
 * each, timestamps already in system ns): perf_sample_hosttrap_v1_t for
 * host trap, perf_sample_snapshot_v1_t for stochastic (the same layout
 * with the three snapshot words where host trap has reserved ones). Tail:
 * count samples. lost is what ROCR reported lost with the callback (on the
 * batch's first record; 0 on the others); a record may carry no sample and
 * only a lost count. method is the session's, rocprofiler-sdk's
 * rocprofiler_pc_sampling_method_t values. This is the record's version 2;
 * version 1 (host trap only) ended before method (24 bytes), and readers
 * still take it. */
#define RPG_PC_SAMPLING_METHOD_STOCHASTIC 1
#define RPG_PC_SAMPLING_METHOD_HOST_TRAP 2
typedef struct rpg_pc_sample_rec {
    rpg_rec_hdr h;
    uint32_t agent_node;
    uint32_t count;
    uint64_t lost;
    uint32_t method; /* RPG_PC_SAMPLING_METHOD_* */
    uint32_t reserved;
} rpg_pc_sample_rec;

/* perf_sample_hosttrap_v1_t / perf_sample_snapshot_v1_t (hsa_ven_amd_pc_sampling.h) */
typedef struct rpg_pc_sample_hosttrap {
    uint64_t pc;
    uint64_t exec_mask;
    uint32_t workgroup_id_x;
    uint32_t workgroup_id_y;
    uint32_t workgroup_id_z;
    uint32_t chiplet_and_wave_id; /* wave in group: bits 0-5; chiplet (XCC): bits 8-10 */
    uint32_t hw_id;
    /* host trap: reserved; stochastic: perf_snapshot_data, _data1, _data2
     * (the gfx9 registers: valid, issued, instruction type, not-issued
     * reason, arbiter state; wave count) */
    uint32_t perf_snapshot_data;
    uint32_t perf_snapshot_data1;
    uint32_t perf_snapshot_data2;
    uint64_t timestamp;
    uint64_t correlation_id; /* (doorbell id << 32) | packet slot, as the trap handler writes it */
} rpg_pc_sample_hosttrap;

/* Where a dispatch went on its hardware queue, while PC sampling is on
 * (the intercept queue's marker callback): the correlation id the trap
 * handler writes into its samples, ((doorbell >> 3) & 0x3ff) << 32 |
 * (hardware write index mod queue size). */
typedef struct rpg_pc_sample_dispatch_rec {
    rpg_rec_hdr h;
    uint64_t dispatch_id;
    uint64_t trap_id;
    uint32_t agent_node;
    uint32_t reserved;
} rpg_pc_sample_dispatch_rec;

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(rpg_pc_sample_rec) == 32, "pc sample record size");
_Static_assert(sizeof(rpg_pc_sample_hosttrap) == 64, "host-trap sample size");
_Static_assert(sizeof(rpg_pc_sample_dispatch_rec) == 32, "pc sample dispatch record size");
_Static_assert(sizeof(rpg_spool_header) == RPG_HEADER_FIXED, "header size");
_Static_assert(sizeof(rpg_rec_hdr) == 8, "record header size");
_Static_assert(sizeof(rpg_chunk_header) == 16, "chunk header size");
_Static_assert(sizeof(rpg_string_rec) == 24, "string record size");
_Static_assert(sizeof(rpg_api_rec) == 48, "api record size");
_Static_assert(sizeof(rpg_api_rec2) == 32, "compact api record size");
_Static_assert(sizeof(rpg_thread_rec) == 16, "thread record size");
_Static_assert(sizeof(rpg_clock_rec) == 32, "clock record size");
_Static_assert(sizeof(rpg_marker_rec) == 56, "marker record size");
_Static_assert(sizeof(rpg_kernel_dispatch_rec) == 120, "dispatch record size");
_Static_assert(sizeof(rpg_memory_copy_rec) == 80, "copy record size");
_Static_assert(sizeof(rpg_memory_allocation_rec) == 64, "allocation record size");
_Static_assert(sizeof(rpg_scratch_memory_rec) == 64, "scratch record size");
_Static_assert(sizeof(rpg_kernel_symbol_rec) == 64, "symbol record size");
_Static_assert(sizeof(rpg_code_object_rec) == 64, "code object record size");
_Static_assert(sizeof(rpg_agent_info_rec) == 8 + 8 * RPG_AGENT_NUMERIC_FIELDS + 4 * RPG_AGENT_NAME_LEN, "agent record size");
_Static_assert(sizeof(rpg_counter_sample_rec) == 48, "counter record size");
#endif

#endif /* RPG_SPOOL_H */
