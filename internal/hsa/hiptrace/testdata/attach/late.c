/* A module the attach test's program dlopens while attached: its HIP
 * import must be redirected by the control thread's rescan (built with
 * -z now and RELRO: a read-only GOT). */
int hipGetDevice(int *device);

int late_call(void)
{
    int d = -1;
    hipGetDevice(&d);
    return d;
}
