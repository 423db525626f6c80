/* agentinfo: an HSA app that calls hsa_agent_get_info N times in a loop (the
 * API-tracing benchmark), prints the loop's ns per call (wall time, then the
 * calling thread's CPU time, which a busy machine's preemption does not
 * inflate), then the same for the loop's fastest twentieth, and exits 0. */
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
    /* The loop runs as BLOCKS blocks; the fastest block (wall and thread
     * CPU separately) is the steady per-call cost, without the blocks a
     * timer interrupt, a page fault or the VM's neighbours happened to hit. */
    enum { BLOCKS = 20 };
    long per = n / BLOCKS > 0 ? n / BLOCKS : 1;
    struct timespec t0, t1, c0, c1, b0, b1, d0, d1;
    double best_ns = 1e30, best_cpu = 1e30;
    uint32_t sum = 0, v;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long done = 0; done < n;) {
        long m = n - done < per ? n - done : per;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &d0);
        clock_gettime(CLOCK_MONOTONIC, &b0);
        for (long i = 0; i < m; i++) {
            hsa_agent_get_info(gpu, HSA_AGENT_INFO_QUEUES_MAX, &v);
            sum += v;
        }
        clock_gettime(CLOCK_MONOTONIC, &b1);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &d1);
        double bn = ((b1.tv_sec - b0.tv_sec) * 1e9 + (b1.tv_nsec - b0.tv_nsec)) / (double)m;
        double bc = ((d1.tv_sec - d0.tv_sec) * 1e9 + (d1.tv_nsec - d0.tv_nsec)) / (double)m;
        if (m == per && bn < best_ns)
            best_ns = bn;
        if (m == per && bc < best_cpu)
            best_cpu = bc;
        done += m;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)n;
    double cpu = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / (double)n;
    printf("%.3f ns/call (%u) %.3f thread-cpu-ns/call\n", ns, sum, cpu);
    printf("best-block %.3f ns/call %.3f thread-cpu-ns/call\n", best_ns, best_cpu);
    return hsa_shut_down() == HSA_STATUS_SUCCESS ? 0 : 93;
}
