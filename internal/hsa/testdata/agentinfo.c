/* agentinfo: an HSA app that calls hsa_agent_get_info N times in a loop (the
 * API-tracing benchmark), prints the loop's ns per call (wall time, then the
 * calling thread's CPU time, which a busy machine's preemption does not
 * inflate), and exits 0. */
#include <hsa/hsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static hsa_status_t first_gpu(hsa_agent_t a, void *data)
{
    hsa_device_type_t t;
    hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
    if (t == HSA_DEVICE_TYPE_GPU) {
        *(hsa_agent_t *)data = a;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    if (hsa_init() != HSA_STATUS_SUCCESS)
        return 91;
    hsa_agent_t gpu = {0};
    hsa_iterate_agents(first_gpu, &gpu);
    if (!gpu.handle)
        return 92;
    struct timespec t0, t1, c0, c1;
    uint32_t sum = 0, v;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        hsa_agent_get_info(gpu, HSA_AGENT_INFO_QUEUES_MAX, &v);
        sum += v;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)n;
    double cpu = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / (double)n;
    printf("%.3f ns/call (%u) %.3f thread-cpu-ns/call\n", ns, sum, cpu);
    return hsa_shut_down() == HSA_STATUS_SUCCESS ? 0 : 93;
}
