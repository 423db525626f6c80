/* A stand-in for librccl.so.1 with RCCL's calling habits, for
 * TestRCCLInterposition: ncclBcast calls ncclBroadcast through the PLT, and
 * ncclCommInitAll runs a thread that calls ncclGetVersion, as RCCL's
 * per-GPU init threads do. None of those calls is the application's. */
#include <pthread.h>
#include <stddef.h>

typedef struct {
    char internal[128];
} ncclUniqueId;

int ncclGetVersion(int *version)
{
    *version = 22707;
    return 0;
}

int ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, int datatype, int root, void *comm,
                  void *stream)
{
    (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)comm, (void)stream;
    return 0;
}

int ncclBcast(void *buff, size_t count, int datatype, int root, void *comm, void *stream)
{
    return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

int ncclGroupStart(void) { return 0; }
int ncclGroupEnd(void) { return 0; }

const char *ncclGetErrorString(int result) { return result ? "fake error" : "fake success"; }

int ncclCommInitRank(void **comm, int nranks, ncclUniqueId commId, int rank)
{
    *comm = (void *)(size_t)(0x1000 + nranks * 16 + rank + commId.internal[127]);
    return 0;
}

static void *init_thread(void *arg)
{
    int v;
    ncclGetVersion(&v);
    *(int *)arg = v;
    return NULL;
}

int ncclCommInitAll(void **comms, int ndev, const int *devlist)
{
    for (int i = 0; i < ndev; i++) {
        int v = 0;
        pthread_t t;
        pthread_create(&t, NULL, init_thread, &v);
        pthread_join(t, NULL);
        comms[i] = (void *)(size_t)(v + (devlist ? devlist[i] : i));
    }
    return 0;
}
