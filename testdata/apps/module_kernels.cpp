// Kernels loaded at run time with hipModuleLoad (built with hipcc --genco).
#include <hip/hip_runtime.h>

extern "C" __global__ void module_fill(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
