// A long-running HIP server for the attach tests (issue 42, test/attach):
// started plainly (no profiler in its environment), it sets up everything
// before anything could attach — per lane two streams, its buffers, one
// warm-up iteration (so its HSA queues exist and its code objects are
// loaded) — prints "ready <pid>" and then loops, per lane:
//
//   roctxRangePush("iteration"); scale on stream 1; hipMemcpyAsync H2D and
//   vadd on stream 2; hipStreamSynchronize both; roctxRangePop; sleep
//
// until stdin reaches end of file or SIGTERM/SIGINT arrives (the iteration
// under way is finished). It then checks what the copies moved (read back
// from the device), prints one line per lane and a last line that depend
// neither on timing nor on being profiled, frees everything and exits 0.
//
// usage: attach_server [--threads N] [--workers N] [--sleep-ms MS] [--elements N] [--gaps FILE]
//   --threads N   N lanes, each on its own thread with its own streams (1)
//   --workers N   fork+exec N copies of itself as workers (each its own
//                 process, lanes and streams); the parent makes no HIP call,
//                 prints "ready <pid> workers <pid>...", forwards SIGTERM and
//                 SIGINT to them, waits for them and prints their results in
//                 worker order (0: none)
//   --sleep-ms MS pause after each iteration (15; 0: none)
//   --elements N  floats per buffer (65536)
//   --gaps FILE   for the attach benchmark (test/attachbench): each lane's
//                 iteration end times, CLOCK_MONOTONIC ns, one "<lane> <ns>"
//                 line each, written to FILE at exit (not with --workers);
//                 the output is otherwise the same
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rocprofiler-sdk-roctx/roctx.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include "common.h"

static std::atomic<bool> stop_requested{false};

static void on_stop_signal(int) { stop_requested.store(true); }

// Worker pids for the parent's signal forwarding (read in a handler).
static pid_t worker_pids[256];
static std::atomic<int> nworkers{0};

static void forward_signal(int sig) {
  int n = nworkers.load();
  for (int i = 0; i < n; i++) kill(worker_pids[i], sig);
}

static void install(void (*handler)(int)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

// Sets stop_requested once stdin reaches end of file (or fails).
static void watch_stdin() {
  char buf[256];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    stop_requested.store(true);
    return;
  }
}

static long parse(const char* opt, const char* v, long lo, long hi) {
  char* end = nullptr;
  long x = v ? std::strtol(v, &end, 10) : 0;
  if (!v || *end || x < lo || x > hi) {
    std::fprintf(stderr, "attach_server: %s wants an integer in [%ld, %ld], got %s\n", opt, lo, hi, v ? v : "nothing");
    std::exit(2);
  }
  return x;
}

struct Lane {
  int n = 0;
  hipStream_t s1 = nullptr, s2 = nullptr;
  float *a = nullptr, *b = nullptr, *c = nullptr;  // device
  float* host = nullptr;                            // pinned, the copies' source

  void setup(int elements, int index) {
    n = elements;
    HIP_CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    HIP_CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    HIP_CHECK(hipMalloc(&a, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&b, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&c, n * sizeof(float)));
    HIP_CHECK(hipHostMalloc(&host, n * sizeof(float)));
    for (int i = 0; i < n; i++) host[i] = float((i * 7 + index * 13) % 1024);
    HIP_CHECK(hipMemset(a, 0, n * sizeof(float)));
    HIP_CHECK(hipDeviceSynchronize());
  }

  void iteration() {
    roctxRangePushA("iteration");
    dim3 block(256), grid((n + 255) / 256);
    hipLaunchKernelGGL(scale, grid, block, 0, s1, a, 1.0f, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpyAsync(b, host, n * sizeof(float), hipMemcpyHostToDevice, s2));
    hipLaunchKernelGGL(vadd, grid, block, 0, s2, a, b, c, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipStreamSynchronize(s1));
    HIP_CHECK(hipStreamSynchronize(s2));
    roctxRangePop();
  }

  // What the copies moved, read back: the number of floats that differ
  // from the source and a checksum of the source.
  std::string check(int index) {
    std::vector<float> back(n);
    HIP_CHECK(hipMemcpy(back.data(), b, n * sizeof(float), hipMemcpyDeviceToHost));
    long bad = 0;
    unsigned long long sum = 0;
    for (int i = 0; i < n; i++) {
      if (back[i] != host[i]) bad++;
      sum += (unsigned long long)host[i];
    }
    char line[160];
    std::snprintf(line, sizeof line, "lane %d: %s: %d floats copied host to device, %ld differ, checksum %llu",
                  index, bad ? "FAIL" : "ok", n, bad, sum);
    return line;
  }

  void teardown() {
    HIP_CHECK(hipStreamDestroy(s1));
    HIP_CHECK(hipStreamDestroy(s2));
    HIP_CHECK(hipFree(a));
    HIP_CHECK(hipFree(b));
    HIP_CHECK(hipFree(c));
    HIP_CHECK(hipHostFree(host));
  }
};

static unsigned long long monotonic_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

// Writes --gaps' file: each lane's iteration end times.
static bool write_gaps(const char* path, const std::vector<std::vector<unsigned long long>>& ends) {
  FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "attach_server: --gaps %s: %s\n", path, std::strerror(errno));
    return false;
  }
  for (size_t i = 0; i < ends.size(); i++)
    for (unsigned long long ns : ends[i]) std::fprintf(f, "%zu %llu\n", i, ns);
  if (std::fclose(f) != 0) {
    std::fprintf(stderr, "attach_server: --gaps %s: %s\n", path, std::strerror(errno));
    return false;
  }
  return true;
}

static int serve(int threads, int sleep_ms, int elements, const char* gaps) {
  install(on_stop_signal);
  HIP_CHECK(hipSetDevice(0));
  std::vector<Lane> lanes(threads);
  for (int i = 0; i < threads; i++) {
    lanes[i].setup(elements, i);
    lanes[i].iteration();  // warm-up: queues created, code objects loaded
  }
  // Every thread of the app exists before the ready line (the tests count
  // them before and after an attach).
  std::thread(watch_stdin).detach();
  std::vector<std::vector<unsigned long long>> ends(threads);
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; i++) {
    if (gaps) ends[i].reserve(1 << 16);
    ts.emplace_back([&lanes, &ends, i, sleep_ms, gaps] {
      while (!stop_requested.load()) {
        lanes[i].iteration();
        if (gaps) ends[i].push_back(monotonic_ns());
        if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      }
    });
  }
  std::printf("ready %d\n", (int)getpid());
  std::fflush(stdout);
  for (auto& t : ts) t.join();

  bool ok = true;
  for (int i = 0; i < threads; i++) {
    std::string line = lanes[i].check(i);
    ok = ok && line.find(": ok:") != std::string::npos;
    std::printf("%s\n", line.c_str());
    lanes[i].teardown();
  }
  if (gaps && !write_gaps(gaps, ends)) ok = false;
  std::printf("attach_server: %d lanes of 2 streams, %d floats each: %s\n", threads, elements, ok ? "ok" : "FAIL");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

// Reads the worker's output until its ready line; returns its pid.
static int await_ready(int fd, std::string& rest) {
  char buf[512];
  for (;;) {
    size_t nl = rest.find('\n');
    if (nl != std::string::npos) {
      std::string line = rest.substr(0, nl);
      rest.erase(0, nl + 1);
      int pid = 0;
      if (std::sscanf(line.c_str(), "ready %d", &pid) == 1) return pid;
      continue;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    rest.append(buf, n);
  }
}

static int supervise(char* self, int workers, int threads, int sleep_ms, int elements) {
  install(forward_signal);
  std::vector<int> fds(workers);
  std::vector<pid_t> pids(workers);
  std::string t = std::to_string(threads), s = std::to_string(sleep_ms), e = std::to_string(elements);
  for (int w = 0; w < workers; w++) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
      std::perror("attach_server: pipe2");
      return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("attach_server: fork");
      return 2;
    }
    if (pid == 0) {
      dup2(p[1], 1);
      char* args[] = {self, (char*)"--threads", (char*)t.c_str(), (char*)"--sleep-ms", (char*)s.c_str(),
                      (char*)"--elements", (char*)e.c_str(), nullptr};
      execv("/proc/self/exe", args);
      _exit(127);
    }
    close(p[1]);
    fds[w] = p[0];
    pids[w] = pid;
    worker_pids[w] = pid;
    nworkers.store(w + 1);
  }
  std::vector<std::string> rest(workers);
  std::string ready = "ready " + std::to_string(getpid()) + " workers";
  bool started = true;
  for (int w = 0; w < workers; w++) {
    int pid = await_ready(fds[w], rest[w]);
    if (pid != pids[w]) started = false;
    ready += " " + std::to_string(pids[w]);
  }
  if (!started) {
    std::fprintf(stderr, "attach_server: a worker did not start\n");
    forward_signal(SIGTERM);
  } else {
    std::printf("%s\n", ready.c_str());
    std::fflush(stdout);
  }
  // The workers stop on their own when stdin (theirs too) ends, or when
  // the signal forwarded to them arrives.
  bool ok = started;
  for (int w = 0; w < workers; w++) {
    char buf[4096];
    for (;;) {
      ssize_t n = read(fds[w], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      rest[w].append(buf, n);
    }
    close(fds[w]);
    int st = 0;
    while (waitpid(pids[w], &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      std::fprintf(stderr, "attach_server: worker %d ended with status 0x%x\n", w, st);
      ok = false;
    }
    size_t from = 0;
    for (size_t nl; (nl = rest[w].find('\n', from)) != std::string::npos; from = nl + 1)
      std::printf("worker %d: %s\n", w, rest[w].substr(from, nl - from).c_str());
  }
  std::printf("attach_server: %d workers: %s\n", workers, ok ? "ok" : "FAIL");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  int threads = 1, workers = 0, sleep_ms = 15, elements = 65536;
  const char* gaps = nullptr;
  for (int i = 1; i < argc; i++) {
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!std::strcmp(argv[i], "--threads")) {
      threads = (int)parse(argv[i], v, 1, 1024), i++;
    } else if (!std::strcmp(argv[i], "--workers")) {
      workers = (int)parse(argv[i], v, 0, 256), i++;
    } else if (!std::strcmp(argv[i], "--sleep-ms")) {
      sleep_ms = (int)parse(argv[i], v, 0, 10000), i++;
    } else if (!std::strcmp(argv[i], "--elements")) {
      elements = (int)parse(argv[i], v, 1, 1 << 26), i++;
    } else if (!std::strcmp(argv[i], "--gaps") && v) {
      gaps = v, i++;
    } else {
      std::fprintf(stderr,
                   "attach_server: unknown argument %s\n"
                   "usage: attach_server [--threads N] [--workers N] [--sleep-ms MS] [--elements N] [--gaps FILE]\n",
                   argv[i]);
      return 2;
    }
  }
  if (workers > 0 && gaps) {
    std::fprintf(stderr, "attach_server: --gaps records one process's lanes: leave out --workers or --gaps\n");
    return 2;
  }
  if (workers > 0) return supervise(argv[0], workers, threads, sleep_ms, elements);
  return serve(threads, sleep_ms, elements, gaps);
}
