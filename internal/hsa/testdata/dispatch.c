/* dispatch: raw HSA kernel-dispatch submission cost. Submits `rounds`
 * batches of `batch` empty dispatches (a placeholder kernel object: the
 * virtual GPU does not execute kernels) to one queue, waits for each batch
 * with a signal on its last packet, and prints the submitting thread's CPU
 * time per dispatch spent in the submission loops only (not in the waits):
 * what an intercepting profiler adds on the app's thread.
 * Usage: dispatch [rounds] [batch] */
#include <hsa/hsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static uint8_t kernel_object[64];

static long long thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 25;
    int batch = argc > 2 ? atoi(argv[2]) : 2000;
    if (hsa_init() != HSA_STATUS_SUCCESS)
        return 91;
    hsa_agent_t gpu = {0};
    hsa_iterate_agents(first_gpu, &gpu);
    hsa_queue_t *q;
    if (hsa_queue_create(gpu, 4096, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &q) !=
        HSA_STATUS_SUCCESS)
        return 92;
    hsa_signal_t done;
    hsa_signal_create(1, 0, NULL, &done);
    long long spent = 0;
    for (int r = 0; r < rounds; r++) {
        hsa_signal_store_relaxed(done, 1);
        long long t0 = thread_ns();
        for (int i = 0; i < batch; i++) {
            uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);
            hsa_kernel_dispatch_packet_t *p =
                (hsa_kernel_dispatch_packet_t *)q->base_address + (idx % q->size);
            memset((char *)p + 4, 0, 60);
            p->setup = 1;
            p->workgroup_size_x = 64;
            p->workgroup_size_y = p->workgroup_size_z = 1;
            p->grid_size_x = 64;
            p->grid_size_y = p->grid_size_z = 1;
            p->kernel_object = (uint64_t)(uintptr_t)kernel_object;
            if (i == batch - 1)
                p->completion_signal = done;
            uint16_t h = HSA_PACKET_TYPE_KERNEL_DISPATCH | (1 << HSA_PACKET_HEADER_BARRIER) |
                         (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                         (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
            __atomic_store_n((uint32_t *)p, h | (1u << 16), __ATOMIC_RELEASE);
            hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
        }
        spent += thread_ns() - t0;
        if (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED) != 0)
            return 93;
    }
    printf("%.1f submit-ns/dispatch\n", (double)spent / ((double)rounds * batch));
    hsa_queue_destroy(q);
    hsa_signal_destroy(done);
    return hsa_shut_down() == HSA_STATUS_SUCCESS ? 0 : 94;
}
