/* Loading AMD's thread-trace decoder (librocprof-trace-decoder.so) with
 * dlopen and driving one parse. The decoder's C entry points and callback
 * shapes are those of its public header (rocprof_trace_decoder.h); only the
 * types rocprof-go needs are spelled here. */
#ifndef RPG_ATT_DECODER_H
#define RPG_ATT_DECODER_H

#include <stdint.h>

typedef struct rpg_td_pc {
    uint64_t addr;      /* ELF vaddr when marker_id != 0, else a raw address */
    uint64_t marker_id; /* code object id, 0 when unknown */
} rpg_td_pc;

typedef int (*rpg_td_trace_cb)(int record_type, void *events, uint64_t n, void *userdata);
typedef int (*rpg_td_isa_cb)(char *instruction, uint64_t *memory_size, uint64_t *size,
                             rpg_td_pc address, void *userdata);
typedef uint64_t (*rpg_td_se_data_cb)(uint8_t **buffer, uint64_t *buffer_size, void *userdata);
typedef int (*rpg_td_parse_fn)(rpg_td_se_data_cb, rpg_td_trace_cb, rpg_td_isa_cb, void *);
typedef const char *(*rpg_td_string_fn)(int);

typedef struct rpg_td_lib {
    void *handle;
    rpg_td_parse_fn parse;
    rpg_td_string_fn info_string;   /* may be NULL */
    rpg_td_string_fn status_string; /* may be NULL */
} rpg_td_lib;

/* rpg_td_open loads the library; on failure it returns -1 and writes a
 * message into err. */
int rpg_td_open(const char *path, rpg_td_lib *lib, char *err, int errlen);
void rpg_td_close(rpg_td_lib *lib);

/* rpg_td_parse hands one shader engine's data to the decoder (once) and
 * forwards records and ISA requests to Go with ctx. */
int rpg_td_parse(rpg_td_lib *lib, const uint8_t *data, uint64_t size, uintptr_t ctx);

const char *rpg_td_info_string(rpg_td_lib *lib, int info);
const char *rpg_td_status_string(rpg_td_lib *lib, int status);

#endif
