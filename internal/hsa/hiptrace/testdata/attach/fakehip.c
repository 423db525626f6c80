/* A stand-in for libamdhip64 in the attach tests: three HIP functions under
 * HIP's version node (fakehip.map), answering fixed values. */
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
