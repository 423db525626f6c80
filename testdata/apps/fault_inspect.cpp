// Reports how the profiler's private files look from inside the app: after
// one HIP call (which creates this process's spool) it prints the mode and
// owner of the spool directory, of its parent (the run's private directory)
// and of every file in the spool directory, and its own arguments verbatim.
// usage: fault_inspect [ARGS...]
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "common.h"

static void show(const char* what, const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    std::printf("%s %s missing\n", what, path.c_str());
    return;
  }
  std::printf("%s %s mode=%04o uid=%d type=%s\n", what, path.c_str(), (unsigned)(st.st_mode & 07777), (int)st.st_uid,
              S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" : "other");
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) std::printf("arg[%d]=%s\n", i, argv[i]);
  int dev = -1;
  HIP_CHECK(hipGetDevice(&dev));
  const char* spool = std::getenv("ROCPROF_GO_SPOOL_DIR");
  if (!spool) {
    std::printf("no ROCPROF_GO_SPOOL_DIR\n");
    return 1;
  }
  std::string dir(spool);
  show("spooldir", dir);
  show("rundir", dir.substr(0, dir.find_last_of('/')));
  DIR* dp = opendir(spool);
  if (!dp) return 1;
  while (dirent* e = readdir(dp)) {
    if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
    show("spool", dir + "/" + e->d_name);
  }
  closedir(dp);
  return 0;
}
