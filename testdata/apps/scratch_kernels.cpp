// Kernels that need scratch (private segment) memory: each keeps an array of
// N ints per work-item, indexed by data the compiler cannot know, so the
// array lives in scratch. Launched with growing and then shrinking needs on
// one stream, synchronising after each launch:
//   small  (N=64)   twice   -> the queue gets scratch once and keeps it
//   medium (N=256)  once    -> more per lane than the queue has: more scratch
//   large  (N=4096) once    -> far more (the runtime may hand it out for one
//                              dispatch only and take it back afterwards)
//   small           once    -> scratch again if the runtime took it back
// Prints one line per launch: "launch <name> <grid> <block> <private bytes>",
// the private bytes being what HIP reports for the kernel (localSizeBytes).
// usage: scratch_kernels
#include "common.h"

template <int N>
__global__ void scratch_array(const int* in, int* out, int n) {
  int buf[N];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < N; i++) buf[i] = in[(t + i) % n] * (i + 1);
  int k = in[t % n] & (N - 1); // an index only the data knows
  int acc = 0;
  for (int i = 0; i < 8; i++) {
    acc += buf[k];
    k = (k * 5 + buf[(k + i) & (N - 1)]) & (N - 1);
  }
  out[t % n] = acc;
}

template <int N>
void launch(const char* name, const int* in, int* out, int n, int grid, int block) {
  hipFuncAttributes attr{};
  HIP_CHECK(hipFuncGetAttributes(&attr, reinterpret_cast<const void*>(&scratch_array<N>)));
  hipLaunchKernelGGL(scratch_array<N>, dim3(grid / block), dim3(block), 0, 0, in, out, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("launch %s %d %d %zu\n", name, grid, block, attr.localSizeBytes);
}

int main() {
  const int n = 4096;
  int *in, *out;
  HIP_CHECK(hipMalloc(&in, n * sizeof(int)));
  HIP_CHECK(hipMalloc(&out, n * sizeof(int)));
  HIP_CHECK(hipMemset(in, 1, n * sizeof(int)));
  launch<64>("small", in, out, n, 4096, 256);
  launch<64>("small", in, out, n, 4096, 256);
  launch<256>("medium", in, out, n, 1024, 256);
  launch<4096>("large", in, out, n, 256, 64);
  launch<64>("small", in, out, n, 4096, 256);
  HIP_CHECK(hipFree(in));
  HIP_CHECK(hipFree(out));
  std::printf("launches 5\n");
  return 0;
}
