/* A stand-in for a ROCTx library in the attach tests: nesting levels per
 * thread and range ids, as the real ones count them. */
#include <stdint.h>

static __thread int level;
static uint64_t next_id;

void roctxMarkA(const char *message) { (void)message; }

int roctxRangePushA(const char *message)
{
    (void)message;
    return level++;
}

int roctxRangePop(void) { return level == 0 ? -1 : --level; }

uint64_t roctxRangeStartA(const char *message)
{
    (void)message;
    return __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
}

void roctxRangeStop(uint64_t id) { (void)id; }
