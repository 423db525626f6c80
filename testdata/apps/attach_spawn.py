#!/usr/bin/env python3
"""Workers in the style of an inference server's (vLLM's tensor-parallel
workers) for the attach tests (issue 42, test/attach): the parent loads HIP
(as importing torch would) and starts N workers with multiprocessing's
"spawn" method (fork + exec of a fresh interpreter). Each worker loads
libamdhip64 through ctypes, loads a code object built with hipcc --genco
(hipModuleLoad), makes its stream and buffers and one warm-up iteration,
then loops: hipMemcpyAsync host to device, hipModuleLaunchKernel of
module_fill, hipStreamSynchronize, a short sleep; until the parent tells
it to stop. The parent prints "ready <pid> workers <pid>..." once every
worker is set up, and stops them when stdin ends or SIGTERM/SIGINT
arrives; it then prints each worker's check of what its copies moved, in
worker order (no line depends on timing or on being profiled), and exits 0
when every worker did.

usage: attach_spawn.py --co MODULE_KERNELS.co [--workers N] [--sleep-ms MS] [--hip LIBAMDHIP64]
"""
import argparse
import ctypes
import glob
import multiprocessing
import os
import signal
import sys
import threading
import time

ELEMENTS = 4096
H2D, D2H = 1, 2  # hipMemcpyHostToDevice, hipMemcpyDeviceToHost


def find_hip():
    """The runtime's libamdhip64.so.N (the highest N), as ctypes loads it."""
    libs = sorted(glob.glob("/usr/lib/x86_64-linux-gnu/libamdhip64.so.[0-9]*"), key=len)
    if not libs:
        sys.exit("attach_spawn.py: no libamdhip64.so.N in /usr/lib/x86_64-linux-gnu: give --hip LIB")
    return libs[0]


class Hip:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)

    def __call__(self, name, *args):
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            raise RuntimeError(f"{name} failed: hipError {rc}")


def worker(index, co, hip_path, sleep_ms, conn):
    hip = Hip(hip_path)
    vp = ctypes.c_void_p
    hip("hipSetDevice", 0)
    module, fn, stream, dev = vp(), vp(), vp(), vp()
    hip("hipModuleLoad", ctypes.byref(module), co.encode())
    hip("hipModuleGetFunction", ctypes.byref(fn), module, b"module_fill")
    hip("hipStreamCreate", ctypes.byref(stream))
    nbytes = ELEMENTS * 4
    hip("hipMalloc", ctypes.byref(dev), ctypes.c_size_t(nbytes))
    host = (ctypes.c_int * ELEMENTS)(*[(i * 7 + index * 13) % 1024 for i in range(ELEMENTS)])
    # module_fill(int* p, int v, int n) on a scratch half of the buffer
    # (the kernel is not executed on the virtual GPU; the copies are).
    scratch = vp()
    hip("hipMalloc", ctypes.byref(scratch), ctypes.c_size_t(nbytes))
    a_p, a_v, a_n = vp(scratch.value), ctypes.c_int(index), ctypes.c_int(ELEMENTS)
    params = (vp * 3)(ctypes.cast(ctypes.byref(a_p), vp), ctypes.cast(ctypes.byref(a_v), vp),
                      ctypes.cast(ctypes.byref(a_n), vp))
    blocks = (ELEMENTS + 255) // 256

    def iteration():
        hip("hipMemcpyAsync", dev, host, ctypes.c_size_t(nbytes), H2D, stream)
        hip("hipModuleLaunchKernel", fn, blocks, 1, 1, 256, 1, 1, 0, stream, params, None)
        hip("hipStreamSynchronize", stream)

    iteration()  # warm-up: the queue exists and the code object is loaded
    conn.send(("ready", os.getpid()))
    while not conn.poll():
        iteration()
        if sleep_ms:
            time.sleep(sleep_ms / 1000)
    back = (ctypes.c_int * ELEMENTS)()
    hip("hipMemcpy", back, dev, ctypes.c_size_t(nbytes), D2H)
    bad = sum(1 for i in range(ELEMENTS) if back[i] != host[i])
    hip("hipFree", dev)
    hip("hipFree", scratch)
    hip("hipStreamDestroy", stream)
    hip("hipModuleUnload", module)
    conn.send(("done", f"{'FAIL' if bad else 'ok'}: {ELEMENTS} ints copied host to device, "
                       f"{bad} differ, checksum {sum(host)}"))
    conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--co", required=True, help="module_kernels.co (hipcc --genco)")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--sleep-ms", type=int, default=15)
    ap.add_argument("--hip", default=None, help="libamdhip64.so.N (default: the runtime's)")
    args = ap.parse_args()
    hip_path = args.hip or find_hip()
    ctypes.CDLL(hip_path)  # loaded, never called: what importing torch does

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    def watch_stdin():
        while os.read(0, 256):
            pass
        stop.set()

    ctx = multiprocessing.get_context("spawn")
    conns, procs = [], []
    for i in range(args.workers):
        parent, child = ctx.Pipe()
        p = ctx.Process(target=worker, args=(i, args.co, hip_path, args.sleep_ms, child))
        p.start()
        child.close()
        conns.append(parent)
        procs.append(p)
    pids = []
    for c in conns:
        what, pid = c.recv()
        assert what == "ready", what
        pids.append(pid)
    # Every thread of the parent exists before the ready line (the tests
    # count them before and after an attach).
    threading.Thread(target=watch_stdin, daemon=True).start()
    print("ready", os.getpid(), "workers", *pids, flush=True)
    while not stop.wait(0.05):
        pass
    for c in conns:
        c.send("stop")
    ok = True
    for i, (c, p) in enumerate(zip(conns, procs)):
        try:
            _, line = c.recv()
        except EOFError:
            line = "FAIL: ended without a result"
        p.join()
        ok = ok and line.startswith("ok") and p.exitcode == 0
        print(f"worker {i}: {line} (exit {p.exitcode})")
    print(f"attach_spawn.py: {args.workers} spawned workers: {'ok' if ok else 'FAIL'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
