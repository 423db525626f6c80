/* Runs one AQLprofile golden packet set on the virtual GPU: the golden start
 * packet, one dispatch of a given grid, then the remaining golden packets
 * (stop and read for PMC, stop for SQTT), and prints the output buffer as one
 * hex u64 per line; with DUMP_ADDR/DUMP_SIZE it then prints "dump " and that
 * memory in hex (the SQTT trace buffer).
 * usage: pmc_golden AQL_BIN CMDBUF_BIN CMDBUF_ADDR OUT_ADDR OUT_SIZE GRID WG [DUMP_ADDR DUMP_SIZE]
 * The golden packets hold absolute addresses, so the arena is mapped at the
 * addresses AQLprofile used. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "hsa_util.h"

static void *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc(*n);
  if (fread(p, 1, *n, f) != *n) exit(2);
  fclose(f);
  return p;
}

int main(int argc, char **argv) {
  if (argc != 8 && argc != 10) {
    fprintf(stderr, "usage: %s AQL_BIN CMDBUF_BIN CMDBUF_ADDR OUT_ADDR OUT_SIZE GRID WG [DUMP_ADDR DUMP_SIZE]\n",
            argv[0]);
    return 2;
  }
  uint64_t dump_addr = argc == 10 ? strtoull(argv[8], NULL, 0) : 0;
  size_t dump_size = argc == 10 ? strtoull(argv[9], NULL, 0) : 0;
  size_t naql, ncmd;
  uint8_t *aql = read_file(argv[1], &naql);
  uint8_t *cmd = read_file(argv[2], &ncmd);
  uint64_t cmd_addr = strtoull(argv[3], NULL, 0), out_addr = strtoull(argv[4], NULL, 0);
  size_t out_size = strtoull(argv[5], NULL, 0);
  uint32_t grid = (uint32_t)strtoul(argv[6], NULL, 0);
  uint16_t wg = (uint16_t)strtoul(argv[7], NULL, 0);
  if (naql < 128 || naql % 64) {
    fprintf(stderr, "%s: expected at least 2 AQL packets, got %zu bytes\n", argv[1], naql);
    return 2;
  }
  uint64_t lo = out_addr < cmd_addr ? out_addr : cmd_addr;
  uint64_t hi = out_addr + out_size > cmd_addr + ncmd ? out_addr + out_size : cmd_addr + ncmd;
  if (dump_size && dump_addr < lo) lo = dump_addr;
  if (dump_size && dump_addr + dump_size > hi) hi = dump_addr + dump_size;
  lo &= ~0xfffull;
  hi = (hi + 0xfff) & ~0xfffull;
  void *m = mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (m != (void *)lo) {
    perror("mmap at the golden arena address");
    return 2;
  }
  memcpy((void *)cmd_addr, cmd, ncmd);
  memset((void *)out_addr, 0xee, out_size);

  CHECK(hsa_init());
  hsa_agent_t gpu = find_gpu();
  hsa_queue_t *q;
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  static uint8_t fake_kernel[64];
  submit(q, aql + 0); /* start */
  hsa_signal_t none = {0};
  dispatch(q, (uint64_t)(uintptr_t)fake_kernel, grid, wg, none);
  for (size_t off = 64; off < naql; off += 64) submit(q, aql + off); /* stop, read */
  barrier_and(q, NULL, 0, done);
  if (wait_zero(done, 10ull * 1000000000ull)) {
    fprintf(stderr, "timed out waiting for the read packet\n");
    return 3;
  }
  for (size_t i = 0; i + 8 <= out_size; i += 8) printf("0x%016llx\n", (unsigned long long)*(uint64_t *)(out_addr + i));
  if (dump_size) {
    printf("dump ");
    for (size_t i = 0; i < dump_size; i++) printf("%02x", ((uint8_t *)dump_addr)[i]);
    printf("\n");
  }
  hsa_signal_destroy(done);
  hsa_queue_destroy(q);
  hsa_shut_down();
  return 0;
}
