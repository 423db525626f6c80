#!/usr/bin/env python3
"""A launcher in the style of torchrun or mpirun: starts N copies of a command
as child processes (fork + exec from Python), waits for all of them and exits
with the first non-zero status (128+N for a child killed by signal N).

usage: fault_launch.py [-n N] COMMAND [ARGS...]
"""
import subprocess
import sys


def main(argv):
    n = 1
    if len(argv) > 2 and argv[0] == "-n":
        n, argv = int(argv[1]), argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    children = [subprocess.Popen(argv) for _ in range(n)]
    status = 0
    for c in children:
        rc = c.wait()
        if rc < 0:
            rc = 128 - rc
        if rc and not status:
            status = rc
    print(f"launcher children={n} status={status}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
