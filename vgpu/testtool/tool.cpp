// A minimal HSA_TOOLS_LIB tool for the virtual GPU's tests: every queue the
// application creates becomes an intercept queue whose callback passes the
// packets through with one writer call (ROCR 5.2.3 allows only one per
// callback). It counts what it saw and reports it on stderr at exit, because
// HIP never calls hsa_shut_down and so never reaches OnUnload.
#include <dlfcn.h>
#include <hsa/hsa_api_trace.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<uint64_t> packets{0};
std::atomic<uint64_t> queues{0};
CoreApiTable saved_core;
AmdExtTable saved_amd;

void pass_through(const void* pkts, uint64_t count, uint64_t, void*,
                  hsa_amd_queue_intercept_packet_writer writer) {
  packets.fetch_add(count, std::memory_order_relaxed);
  writer(pkts, count);
}

hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*cb)(hsa_status_t, hsa_queue_t*, void*), void* data,
                          uint32_t private_size, uint32_t group_size, hsa_queue_t** queue) {
  // ROCR 6.2 and later hand out one shared cooperative queue per agent; an
  // intercept queue around it is torn down twice at exit (a crash in ROCR
  // itself, with any intercepting tool), so it is left alone.
  if (type == HSA_QUEUE_TYPE_COOPERATIVE)
    return saved_core.hsa_queue_create_fn(agent, size, type, cb, data, private_size, group_size, queue);
  hsa_status_t s = saved_amd.hsa_amd_queue_intercept_create_fn(agent, size, type, cb, data, private_size,
                                                                 group_size, queue);
  if (s != HSA_STATUS_SUCCESS) return s;
  queues.fetch_add(1, std::memory_order_relaxed);
  return saved_amd.hsa_amd_queue_intercept_register_fn(*queue, pass_through, nullptr);
}

void report() {
  std::fprintf(stderr, "vgpu-testtool: queues=%llu packets=%llu\n",
               static_cast<unsigned long long>(queues.load()),
               static_cast<unsigned long long>(packets.load()));
}

}  // namespace

extern "C" bool OnLoad(HsaApiTable* table, uint64_t, uint64_t, const char* const*) {
  // ROCR dlcloses its tools in hsa_shut_down, which HIP 6 calls at exit
  // before its own destructors destroy the queues this tool intercepts:
  // the tool must stay mapped for them (every real tool pins itself).
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&OnLoad), &self)) dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  saved_core = *table->core_;
  saved_amd = *table->amd_ext_;
  table->core_->hsa_queue_create_fn = queue_create;
  std::atexit(report);
  return true;
}

extern "C" void OnUnload() {}
