// multistream: a HIP app with known dispatch and copy counts, used by the
// shim's tests. Usage: multistream [mode] [exit-code]
//   run        4 streams: stream s gets s+1 vadd, 2 scale (dynamic LDS) and
//              1 fill3d dispatches, one H2D and one D2H async copy; exits
//              with exit-code.
//   abort N    N vadd dispatches on the null stream, synchronised, then abort().
//   hang N     N vadd dispatches, synchronised, prints "ready", then sleeps
//              (the test SIGKILLs it).
//   bench N    N empty kernels back to back on the null stream, one sync.
//   nosync N   N vadd dispatches, then return from main without waiting.
//   blit       one hipMemset and one device-to-device hipMemcpy (ROCclr's
//              blit kernels), then one vadd.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#define CHECK(x)                                                              \
    do {                                                                      \
        hipError_t e_ = (x);                                                  \
        if (e_ != hipSuccess) {                                               \
            fprintf(stderr, "%s: %s\n", #x, hipGetErrorString(e_));           \
            exit(90);                                                         \
        }                                                                     \
    } while (0)

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

__global__ void scale(float *c, float f, int n)
{
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? c[i] : 0.0f;
    __syncthreads();
    if (i < n)
        c[i] = tile[threadIdx.x] * f;
}

__global__ void fill3d(float *c, float v)
{
    __shared__ float stat[64];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    stat[threadIdx.x] = v;
    __syncthreads();
    c[(z * 8 + y) * 64 + x] = stat[threadIdx.x];
}

__global__ void empty() {}

static const int N = 1024;

static void vadds(int count)
{
    float *a, *b, *c;
    CHECK(hipMalloc(&a, N * sizeof(float)));
    CHECK(hipMalloc(&b, N * sizeof(float)));
    CHECK(hipMalloc(&c, N * sizeof(float)));
    for (int i = 0; i < count; i++)
        hipLaunchKernelGGL(vadd, dim3(N / 256), dim3(256), 0, 0, a, b, c, N);
    CHECK(hipDeviceSynchronize());
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "run";
    int arg = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(mode, "abort")) {
        vadds(arg);
        abort();
    }
    if (!strcmp(mode, "hang")) {
        vadds(arg);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "bench")) {
        hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, 0);
        CHECK(hipDeviceSynchronize());
        // The launching thread's own CPU time: what a profiler adds on the
        // app's thread, apart from its helper threads.
        struct timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        for (int i = 0; i < arg; i++)
            hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, 0);
        CHECK(hipDeviceSynchronize());
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        printf("%lld thread-cpu-ns\n",
               (long long)(c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec));
        return 0;
    }
    if (!strcmp(mode, "nosync")) {
        float *a;
        CHECK(hipMalloc(&a, N * sizeof(float)));
        for (int i = 0; i < arg; i++)
            hipLaunchKernelGGL(vadd, dim3(N / 256), dim3(256), 0, 0, a, a, a, N);
        return 0;
    }
    if (!strcmp(mode, "blit")) {
        float *a, *b;
        CHECK(hipMalloc(&a, N * sizeof(float)));
        CHECK(hipMalloc(&b, N * sizeof(float)));
        CHECK(hipMemset(a, 0, N * sizeof(float)));
        CHECK(hipMemcpy(b, a, N * sizeof(float), hipMemcpyDeviceToDevice));
        hipLaunchKernelGGL(vadd, dim3(N / 256), dim3(256), 0, 0, a, a, b, N);
        CHECK(hipDeviceSynchronize());
        return arg;
    }
    const int S = 4;
    hipStream_t st[S];
    float *host[S], *dev[S];
    for (int s = 0; s < S; s++) {
        CHECK(hipStreamCreate(&st[s]));
        CHECK(hipHostMalloc(&host[s], N * sizeof(float)));
        CHECK(hipMalloc(&dev[s], 64 * 8 * 4 * sizeof(float)));
        for (int i = 0; i < N; i++)
            host[s][i] = (float)i;
    }
    for (int s = 0; s < S; s++) {
        CHECK(hipMemcpyAsync(dev[s], host[s], N * sizeof(float), hipMemcpyHostToDevice, st[s]));
        for (int k = 0; k <= s; k++)
            hipLaunchKernelGGL(vadd, dim3(N / 256), dim3(256), 0, st[s], dev[s], dev[s], dev[s], N);
        for (int k = 0; k < 2; k++)
            hipLaunchKernelGGL(scale, dim3(N / 128), dim3(128), 128 * sizeof(float), st[s], dev[s],
                               2.0f, N);
        hipLaunchKernelGGL(fill3d, dim3(4, 4, 4), dim3(16, 2, 1), 0, st[s], dev[s], 1.0f);
        CHECK(hipMemcpyAsync(host[s], dev[s], N * sizeof(float), hipMemcpyDeviceToHost, st[s]));
    }
    for (int s = 0; s < S; s++)
        CHECK(hipStreamSynchronize(st[s]));
    printf("done\n");
    return arg;
}
