/* static.c: a statically linked process (built for x86-64 and for i386). */
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	for (;;)
		sleep(60);
}
