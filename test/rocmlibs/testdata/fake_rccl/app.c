/* Calls the stand-in RCCL as an application does (TestRCCLInterposition). */
#include <stdio.h>
#include <string.h>

typedef struct {
    char internal[128];
} ncclUniqueId;

int ncclGetVersion(int *version);
int ncclBcast(void *buff, size_t count, int datatype, int root, void *comm, void *stream);
int ncclGroupStart(void);
int ncclGroupEnd(void);
const char *ncclGetErrorString(int result);
int ncclCommInitRank(void **comm, int nranks, ncclUniqueId commId, int rank);
int ncclCommInitAll(void **comms, int ndev, const int *devlist);

int main(void)
{
    int v = 0;
    ncclGetVersion(&v);
    ncclUniqueId id;
    for (int i = 0; i < 128; i++)
        id.internal[i] = (char)i;
    void *comm = NULL;
    ncclCommInitRank(&comm, 4, id, 2);
    void *comms[2];
    int devs[2] = {0, 1};
    ncclCommInitAll(comms, 2, devs);
    ncclGroupStart();
    float buf[4];
    ncclBcast(buf, 4, 7, 0, comm, NULL);
    ncclGroupEnd();
    printf("version %d comm %p comms %p %p %s\n", v, comm, comms[0], comms[1], ncclGetErrorString(0));
    return 0;
}
