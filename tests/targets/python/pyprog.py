# pyprog.py -- CPython target for ustack_dwarf's Python frames (tests/runtime/python.test).
# Usage: python3.11 pyprog.py MODE [SECS [OUT]]. Each mode runs a known call chain for SECS
# seconds (default 3); the line that calls os.umask() is where a tracepoint on sys_enter_umask
# sees the exact stack, so the runtime tests do not depend on where a timer sample lands.
#   chain    main -> a -> b -> c (CPU work; c calls os.umask)
#   ctypes   main -> a -> b -> libc qsort (C) -> cmp (a ctypes callback) -> os.umask
#   threads  threads pyt0, pyt1: run -> worker0/worker1 -> spin -> os.umask
#   gen      main -> consume -> produce (a generator) -> os.umask
#   coro     asyncio.run(outer()) -> outer -> inner (coroutines) -> os.umask
#   shares   main -> work -> f_half / f_third / f_sixth, CPU in about those shares, while a
#            thread samples sys._current_frames() of the main thread at 100 Hz and writes folded
#            stacks ("main;work;f_half 12") to OUT at the end
import ctypes
import os
import sys
import threading
import time

SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
END = time.monotonic() + SECS


def c(n):
    x = 0
    for i in range(n):
        x += i * i
    os.umask(0o022)
    return x


def b(n):
    return c(n)


def a(n):
    return b(n)


def main_chain():
    while time.monotonic() < END:
        a(20000)


CMPFUNC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def cmp(x, y):
    os.umask(0o022)
    return x[0] - y[0]


def b_sort(arr, n):
    libc = ctypes.CDLL(None)
    libc.qsort(arr, n, ctypes.sizeof(ctypes.c_int), CMPFUNC(cmp))


def a_sort():
    n = 64
    arr = (ctypes.c_int * n)(*range(n, 0, -1))
    b_sort(arr, n)


def main_ctypes():
    while time.monotonic() < END:
        a_sort()


def spin():
    x = 0
    for i in range(5000):
        x += i
    os.umask(0o022)


def worker0():
    while time.monotonic() < END:
        spin()


def worker1():
    while time.monotonic() < END:
        spin()


def main_threads():
    ts = [threading.Thread(target=w, name=f"pyt{k}") for k, w in enumerate((worker0, worker1))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def produce():
    while True:
        x = 0
        for i in range(2000):
            x += i
        os.umask(0o022)
        yield x


def consume():
    for _ in produce():
        if time.monotonic() >= END:
            return


def main_gen():
    consume()


async def inner():
    x = 0
    for i in range(2000):
        x += i
    os.umask(0o022)
    return x


async def outer():
    while time.monotonic() < END:
        await inner()


def main_coro():
    import asyncio
    asyncio.run(outer())


def burn(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def f_half():
    burn(3000)


def f_third():
    burn(2000)


def f_sixth():
    burn(1000)


def work():
    f_half()
    f_third()
    f_sixth()


def main_shares(out):
    main_id = threading.main_thread().ident
    counts = {}
    done = threading.Event()

    def sampler():
        while not done.wait(0.01):
            f = sys._current_frames().get(main_id)
            names = []
            while f is not None:
                names.append(f.f_code.co_name)
                f = f.f_back
            key = ";".join(reversed(names))
            counts[key] = counts.get(key, 0) + 1

    sys.setswitchinterval(0.0005)  # the sample lands at most 0.5 ms after it is asked for
    t = threading.Thread(target=sampler, name="sampler")
    t.start()
    while time.monotonic() < END:
        work()
    done.set()
    t.join()
    with open(out, "w") as f:
        for k, v in sorted(counts.items()):
            f.write(f"{k} {v}\n")


MODES = {"chain": main_chain, "ctypes": main_ctypes, "threads": main_threads, "gen": main_gen,
         "coro": main_coro}

if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "chain"
    if mode == "shares":
        main_shares(sys.argv[3])
    else:
        MODES[mode]()
