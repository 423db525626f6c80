/* A stand-in for libamdhip64 in the attach tests: four HIP functions under
 * HIP's version node (fakehip.map), answering fixed values;
 * hipStreamSynchronize waits while fakehip_block is set (a call that stays
 * inside the profiler's wrapper as long as the test wants). */
#include <unistd.h>

int fakehip_block;
int fakehip_inside;
int hipGetDevice(int *device)
{
    *device = 7;
    return 0;
}

int hipGetDeviceCount(int *count)
{
    *count = 1;
    return 0;
}

int hipDeviceSynchronize(void) { return 0; }

int hipStreamSynchronize(void *stream)
{
    (void)stream;
    __atomic_store_n(&fakehip_inside, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&fakehip_block, __ATOMIC_SEQ_CST))
        usleep(100);
    __atomic_store_n(&fakehip_inside, 0, __ATOMIC_SEQ_CST);
    return 0;
}
