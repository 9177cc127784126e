"""Microseconds per small op from Python (webtensor's package) against the
same op from C (build/tests/small_op_c), NumPy and, where installed,
PyTorch on the CPU (bench/RESULTS.md, "Python: overhead per op").

    PYTHONPATH=python python3 bench/python_overhead.py [--c build/tests/small_op_c]
        [--elements 16] [--ops 20000] [--rounds 9] [--backend cpu] [--cpu-time]

Each figure is the median over rounds of a round's time per op; a round
makes `ops` results of the op on two [elements] float32 arrays and drops
them (as a loop that uses each result once does). The Python overhead is
the webtensor figure minus the C one."""
import argparse
import subprocess
import sys
import time

import numpy as np


CLOCK = time.perf_counter


def per_op(fn, ops, rounds):
    fn(ops // 10)  # warm up
    times = []
    for _ in range(rounds):
        t0 = CLOCK()
        fn(ops)
        times.append((CLOCK() - t0) / ops)
    return sorted(times)[rounds // 2] * 1e6


def loops(add, a, b):
    def binary(n):
        for _ in range(n):
            add(a, b)

    def scalar(n):
        for _ in range(n):
            a + 1.0
    return binary, scalar


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--c", help="the small_op_c program (the same op from C)")
    ap.add_argument("--elements", type=int, default=16)
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--cpu-time", action="store_true",
                    help="the process's CPU time instead of the wall clock (a shared machine)")
    a = ap.parse_args()
    global CLOCK
    if a.cpu_time:
        CLOCK = time.process_time
    n, ops, rounds = a.elements, a.ops, a.rounds
    rows = []

    import webtensor as wt
    ctx = wt.Context(a.backend)
    x = wt.full([n], 1.0, context=ctx)
    y = wt.full([n], 0.5, context=ctx)

    def synced(fn):
        def run(k):
            fn(k)
            ctx.sync()
        return run
    b, s = loops(lambda p, q: p + q, x, y)
    rows.append(("webtensor Python, a + b", per_op(synced(b), ops, rounds)))
    add = wt.add
    b2, _ = loops(add, x, y)
    rows.append(("webtensor Python, wt.add(a, b)", per_op(synced(b2), ops, rounds)))
    rows.append(("webtensor Python, a + 1.0", per_op(synced(s), ops, rounds)))

    if a.c:
        out = subprocess.run([a.c, a.backend, str(n), str(ops), str(rounds)], capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines():
            fields = line.split(":")[1].split()
            us = float(fields[4] if a.cpu_time else fields[0])
            rows.append(("webtensor C, " + ("wt_add" if "add(a, b)" in line else "wt_add_scalar"), us))

    xn, yn = np.ones(n, np.float32), np.full(n, 0.5, np.float32)
    b, s = loops(np.add, xn, yn)
    rows.append(("NumPy, a + b", per_op(b, ops, rounds)))
    rows.append(("NumPy, a + 1.0", per_op(s, ops, rounds)))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        xt, yt = torch.ones(n), torch.full((n,), 0.5)
        b, s = loops(torch.add, xt, yt)
        rows.append(("PyTorch %s CPU, torch.add(a, b)" % torch.__version__, per_op(b, ops, rounds)))
        rows.append(("PyTorch CPU, a + 1.0", per_op(s, ops, rounds)))

    print("small op on [%d] float32, backend %s, median of %d rounds of %d ops, %s (Python %s, "
          "NumPy %s)" % (n, a.backend, rounds, ops, "CPU time" if a.cpu_time else "wall clock",
                         sys.version.split()[0], np.__version__))
    print("| caller, op | us per op |\n| --- | --- |")
    for name, us in rows:
        print("| %s | %.2f |" % (name, us))
    c = dict(rows)
    if "webtensor C, wt_add" in c:
        print("Python overhead: %.2f us (a + b), %.2f us (wt.add), %.2f us (a + 1.0)" % (
            c["webtensor Python, a + b"] - c["webtensor C, wt_add"],
            c["webtensor Python, wt.add(a, b)"] - c["webtensor C, wt_add"],
            c["webtensor Python, a + 1.0"] - c["webtensor C, wt_add_scalar"]))


if __name__ == "__main__":
    main()
