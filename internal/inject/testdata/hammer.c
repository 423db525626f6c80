/*
 * hammer.c: 64 threads that malloc/free and dlopen/dlclose argv[1] without
 * rest, each making a poll(NULL, 0, 0) every 64 rounds, until the file
 * argv[2] exists; the main thread waits in pthread_join (a futex). No
 * thread is blocked in a waiting system call for long: the injector must
 * follow one to a poll. Prints "ready", then "done <rounds>".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define NTHREADS 64

static const char *lib, *stopfile;
static atomic_long rounds;

static void *hammer(void *arg)
{
	unsigned seed = (unsigned)(long)arg;
	for (long r = 1;; r++) {
		void *p[16];
		for (int i = 0; i < 16; i++)
			p[i] = malloc(16 + (rand_r(&seed) % 8192));
		for (int i = 0; i < 16; i++)
			free(p[i]);
		if (r % 4 == 0) {
			void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
			if (!h) {
				fprintf(stderr, "dlopen: %s\n", dlerror());
				exit(2);
			}
			dlclose(h);
		}
		if (r % 64 == 0) {
			poll(NULL, 0, 0);
			struct stat st;
			if (stat(stopfile, &st) == 0)
				break;
		}
		atomic_fetch_add(&rounds, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	lib = argv[1];
	stopfile = argv[2];
	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_t th[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, hammer, (void *)i);
	printf("ready\n");
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	printf("done %ld\n", atomic_load(&rounds));
	return 0;
}
