// vmem: HIP virtual memory management (hipMemCreate/hipMemMap, which ROCR
// serves with hsa_amd_vmem_*): N rounds of create, reserve, map, set access,
// a kernel on the mapped range, a memset of it read back (the data must be
// the GPU's: the virtual GPU's fill and copy reach the mapped pages), unmap,
// release. The memory allocation trace has one VMEM_ALLOCATE and one
// VMEM_FREE per round, of the granularity times the round number.
// Usage: vmem [rounds]
#include "common.h"

#include <cstring>
#include <hip/hip_version.h>
#include <vector>

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  int dev = 0;
  HIP_CHECK(hipSetDevice(dev));
  int supported = 0;
#if HIP_VERSION >= 50300000
  HIP_CHECK(hipDeviceGetAttribute(&supported, hipDeviceAttributeVirtualMemoryManagementSupported, dev));
#endif
  // (HIP 5.2 has neither the attribute nor an implementation: ROCR 5.2 has
  // no virtual memory API.)
  if (!supported) {
    std::fprintf(stderr, "vmem: virtual memory management not supported\n");
    return 3;
  }
  hipMemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = dev;
  size_t gran = 0;
  HIP_CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityMinimum));
  for (int r = 0; r < rounds; r++) {
    size_t size = gran * (r + 1);
    hipMemGenericAllocationHandle_t h;
    HIP_CHECK(hipMemCreate(&h, size, &prop, 0));
    void* va = nullptr;
    HIP_CHECK(hipMemAddressReserve(&va, size, 0, nullptr, 0));
    HIP_CHECK(hipMemMap(va, size, 0, h, 0));
    hipMemAccessDesc acc;
    std::memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = hipMemAccessFlagsProtReadWrite;
    HIP_CHECK(hipMemSetAccess(va, size, &acc, 1));
    int n = (int)(size / sizeof(float));
    hipLaunchKernelGGL(scale, dim3((n + 255) / 256), dim3(256), 0, 0, (float*)va, 2.0f, n);
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemsetD32((hipDeviceptr_t)va, 0x5a000000u + (unsigned)r, n));
    HIP_CHECK(hipDeviceSynchronize());
    std::vector<unsigned> back(n);
    HIP_CHECK(hipMemcpy(back.data(), va, size, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
      if (back[i] != 0x5a000000u + (unsigned)r) {
        std::fprintf(stderr, "vmem: round %d: word %d reads 0x%x after the memset\n", r, i, back[i]);
        return 1;
      }
    HIP_CHECK(hipMemUnmap(va, size));
    HIP_CHECK(hipMemAddressFree(va, size));
    HIP_CHECK(hipMemRelease(h));
  }
  std::printf("vmem rounds=%d granularity=%zu\n", rounds, gran);
  return 0;
}
