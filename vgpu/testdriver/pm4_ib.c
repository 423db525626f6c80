/* Submits one PM4 indirect buffer (dwords given in hex on the command line)
 * in an AMD vendor AQL packet and prints the first 32 dwords of a data page
 * mapped at 0x200000000000 (which the IB may address) after it ran, one hex
 * dword per line. IB memory for nested buffers: the page at 0x200000001000
 * is filled from the argument after "--", if any.
 * usage: pm4_ib DWORD... [-- DWORD...] */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "hsa_util.h"

#define DATA_ADDR 0x200000000000ull
#define IB2_ADDR 0x200000001000ull

int main(int argc, char **argv) {
  void *m = mmap((void *)DATA_ADDR, 0x3000, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (m != (void *)DATA_ADDR) {
    perror("mmap");
    return 2;
  }
  uint32_t *ib = (uint32_t *)(DATA_ADDR + 0x2000), *ib2 = (uint32_t *)IB2_ADDR;
  uint32_t n = 0, n2 = 0;
  int second = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) {
      second = 1;
      continue;
    }
    uint32_t v = (uint32_t)strtoul(argv[i], NULL, 16);
    if (second) ib2[n2++] = v;
    else ib[n++] = v;
  }
  CHECK(hsa_init());
  hsa_agent_t gpu = find_gpu();
  hsa_queue_t *q;
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  uint32_t pkt[16] = {0};
  pkt[0] = 1u << 16; /* VENDOR_SPECIFIC header 0, AMD format 1 (PM4 IB) */
  pkt[1] = 0xc0023f00;
  pkt[2] = (uint32_t)(uintptr_t)ib;
  pkt[3] = (uint32_t)((uintptr_t)ib >> 32);
  pkt[4] = n | (1u << 23) | (1u << 28);
  pkt[5] = 0xa;
  memcpy(&pkt[14], &done.handle, 8);
  submit(q, pkt);
  if (wait_zero(done, 10ull * 1000000000ull)) {
    fprintf(stderr, "timed out\n");
    return 3;
  }
  for (int i = 0; i < 32; i++) printf("%08x\n", ((uint32_t *)DATA_ADDR)[i]);
  hsa_signal_destroy(done);
  hsa_queue_destroy(q);
  hsa_shut_down();
  return 0;
}
