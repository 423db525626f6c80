/* A statically linked program for the attach tests (test/attach): what
 * `rocprof-go --attach` must refuse with one clear line, leaving it
 * untouched. It prints "ready <pid>", then echoes nothing and waits for
 * stdin to end, and prints a fixed last line. */
#include <stdio.h>
#include <unistd.h>

int main(void) {
  char buf[256];
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  while (read(0, buf, sizeof buf) > 0) {
  }
  printf("attach_static: stdin ended\n");
  return 0;
}
