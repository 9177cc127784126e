#!/usr/bin/env python3
"""NumPy peer of `webtensor bench --backend cpu`: the same cases at the same
shapes, on the CPU.

Run it on the same machine, in the same session, as
`webtensor bench --backend cpu --csv ours.csv` (bench/run_cpu.sh does both),
then join the two files with bench/compare.py.

Timing follows the webtensor engine (bench/bench_engine.c): seeded uniform
inputs in [-1, 1), rotated over up to 4 sets when one set is under 64 MiB,
warm-up runs, a probe repetition that sizes the timed ones (about 20 ms of
launches each, 1 to 100 launches), then up to 10 repetitions (fewer past the
time budget), median per op, wall clock. Every op writes into a buffer made
once (out=) where NumPy allows it, so NumPy does not pay for allocation that
webtensor's pool avoids. NumPy's elementwise ops run on one thread; its
matrix products run on OpenBLAS's threads, as webtensor's do.

Output: CSV with the columns of `webtensor bench --csv`:
case,shape,backend,device,median_ms,metric,work,rate,unit,status,error
"""
import argparse
import csv
import math
import statistics
import sys
import time

import numpy as np

import peer_plans as plans

ROTATE_BYTES = 64 * 1024 * 1024
MAX_SETS = 4
MAX_INNER = 100
LAYERNORM_EPS = np.float32(1e-5)
RMSNORM_EPS = np.float32(1e-6)

# Per size set: warm-up runs, repetitions, seconds a repetition should last,
# seconds after which no repetition beyond the third starts (as the engine).
TIMING = {
    "quick": (2, 5, 0.005, 1.0),
    "default": (3, 10, 0.020, 8.0),
}


# ------------------------------------------------------------------ cases
# Each case: metric, plan (peer_plans.py, shared with torch_peer.py), and
# make(params) -> run(inputs): make allocates the output buffers once, run
# computes into them.

def f32(shape):
    return np.empty(shape, dtype=np.float32)


def make_add(p):
    out = f32(p)
    return lambda x: np.add(x[0], x[1], out=out)


def make_exp(p):
    out = f32(p)
    return lambda x: np.exp(x[0], out=out)


def make_sum_all(p):
    return lambda x: np.sum(x[0])


def make_rowsum(p):
    out = f32(p[0])
    return lambda x: np.sum(x[0], axis=1, out=out)


def make_softmax(p):
    r, c = p
    e, m, s = f32((r, c)), f32((r, 1)), f32((r, 1))

    def run(x):
        np.max(x[0], axis=1, keepdims=True, out=m)
        np.subtract(x[0], m, out=e)
        np.exp(e, out=e)
        np.sum(e, axis=1, keepdims=True, out=s)
        return np.divide(e, s, out=e)
    return run


def make_layernorm(p):
    r, c = p
    out, sq, mean, var = f32((r, c)), f32((r, c)), f32((r, 1)), f32((r, 1))

    def run(x):
        np.mean(x[0], axis=1, keepdims=True, out=mean)
        np.subtract(x[0], mean, out=out)
        np.multiply(out, out, out=sq)
        np.mean(sq, axis=1, keepdims=True, out=var)
        np.add(var, LAYERNORM_EPS, out=var)
        np.sqrt(var, out=var)
        np.divide(out, var, out=out)
        np.multiply(out, x[1], out=out)
        return np.add(out, x[2], out=out)
    return run


def make_rmsnorm(p):
    r, c = p
    out, sq, ms = f32((r, c)), f32((r, c)), f32((r, 1))

    def run(x):
        np.multiply(x[0], x[0], out=sq)
        np.mean(sq, axis=1, keepdims=True, out=ms)
        np.add(ms, RMSNORM_EPS, out=ms)
        np.sqrt(ms, out=ms)
        np.divide(x[0], ms, out=out)
        return np.multiply(out, x[1], out=out)
    return run


def make_transpose(p):
    r, c = p
    out = f32((c, r))

    def run(x):
        np.copyto(out, x[0].T)
        return out
    return run


def make_matmul(p):
    m, n, _ = p
    out = f32((m, n))
    return lambda x: np.matmul(x[0], x[1], out=out)


def make_bmm(p):
    b, m, n, _ = p
    out = f32((b, m, n))
    return lambda x: np.matmul(x[0], x[1], out=out)


def make_gemv(p):
    out = f32(p[0])
    return lambda x: np.matmul(x[0], x[1], out=out)


def make_matmul_nt(p):
    out = f32((p[0], p[1]))
    return lambda x: np.matmul(x[0], x[1].T, out=out)


def make_add_chain(p):
    length, n = p
    bufs = (f32(n), f32(n))

    def run(x):
        y = np.add(x[0], x[1], out=bufs[0])
        for i in range(1, length):
            y = np.add(y, x[1], out=bufs[i % 2])
        return y
    return run


CASES = {
    "add": ("bytes", plans.plan_binary, make_add),
    "exp": ("bytes", plans.plan_unary, make_exp),
    "sum": ("bytes", plans.plan_sum_all, make_sum_all),
    "rowsum": ("bytes", plans.plan_rows, make_rowsum),
    "softmax": ("bytes", plans.plan_softmax, make_softmax),
    "layernorm": ("bytes", plans.plan_layernorm, make_layernorm),
    "rmsnorm": ("bytes", plans.plan_rmsnorm, make_rmsnorm),
    "transpose": ("bytes", plans.plan_transpose, make_transpose),
    "matmul": ("flops", plans.plan_matmul, make_matmul),
    "bmm": ("flops", plans.plan_bmm, make_bmm),
    "gemv": ("bytes", plans.plan_gemv, make_gemv),
    "add_chain": ("bytes", plans.plan_add_chain, make_add_chain),
    "matmul_nt": ("flops", plans.plan_matmul_nt, make_matmul_nt),
}

# The CPU size sets of bench/bench_cases.c, in the same order.
SIZES = {
    "quick": [
        ("add", (1 << 20,)), ("exp", (1 << 20,)), ("sum", (1 << 20,)),
        ("rowsum", (1024, 1024)),
        ("softmax", (1024, 1024)), ("layernorm", (1024, 1024)), ("rmsnorm", (1024, 1024)),
        ("transpose", (1024, 1024)),
        ("matmul", (256, 256, 256)), ("bmm", (16, 128, 128, 128)),
        ("gemv", (1024, 1024)), ("add_chain", (1000, 1024)),
        ("matmul_nt", (256, 256, 256)),
    ],
    "default": [
        ("add", (1 << 24,)), ("exp", (1 << 24,)), ("sum", (1 << 24,)),
        ("rowsum", (4096, 4096)),
        ("softmax", (4096, 4096)), ("layernorm", (4096, 4096)), ("rmsnorm", (4096, 4096)),
        ("transpose", (4096, 4096)),
        ("matmul", (1024, 1024, 1024)), ("bmm", (32, 256, 256, 256)),
        ("gemv", (4096, 4096)), ("add_chain", (1000, 1024)),
        ("matmul_nt", (1024, 1024, 1024)),
    ],
}


# ----------------------------------------------------------------- timing

def make_inputs(shapes, item_index):
    set_bytes = sum(4 * math.prod(s) for s in shapes)
    sets = max(1, min(MAX_SETS, math.ceil(ROTATE_BYTES / set_bytes))) if set_bytes else 1
    out = []
    for s in range(sets):
        rng = np.random.default_rng(item_index * 1000003 + s * 101 + 1)
        out.append([rng.uniform(-1.0, 1.0, size=shape).astype(np.float32) for shape in shapes])
    return out


def inner_for(per_launch_s, target_s):
    if per_launch_s <= 0:
        return MAX_INNER
    return max(1, min(MAX_INNER, math.ceil(target_s / per_launch_s)))


def measure(run, inputs, ops_per_run, warmup, reps, target_s, budget_s):
    """(median seconds per op, launches per repetition, repetitions)."""
    cursor = [0]

    def rep(inner):
        t0 = time.perf_counter()
        for _ in range(inner):
            run(inputs[cursor[0]])
            cursor[0] = (cursor[0] + 1) % len(inputs)
        return time.perf_counter() - t0

    t = 0.0
    for _ in range(warmup):
        t = rep(1)
    inner = inner_for(t, target_s)
    if inner > 1:  # a probe of several launches sizes the repetitions
        inner = inner_for(rep(inner) / inner, target_s)
    samples = []
    start = time.perf_counter()
    for n in range(reps):
        if n >= 3 and time.perf_counter() - start > budget_s:
            break
        samples.append(rep(inner) / (inner * ops_per_run))
    return statistics.median(samples), inner, len(samples)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="default")
    ap.add_argument("--filter", default="", help="comma-separated case names")
    ap.add_argument("--reps", type=int, default=0, help="repetitions (0: the size set's)")
    ap.add_argument("--csv", default="-", help="output file ('-': stdout)")
    args = ap.parse_args()

    warmup, reps, target_s, budget_s = TIMING[args.size]
    if args.reps > 0:
        reps = args.reps
    device = f"NumPy {np.__version__} on {cpu_name()}"
    words = [w for w in args.filter.split(",") if w]
    unknown = [w for w in words if w not in CASES]
    if unknown:
        print(f"numpy_peer.py: no case named {', '.join(unknown)}", file=sys.stderr)
        return 2
    print(f"# {device}; {len(SIZES[args.size])} cases at size {args.size}", file=sys.stderr)

    out = sys.stdout if args.csv == "-" else open(args.csv, "w", newline="")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["case", "shape", "backend", "device", "median_ms", "metric", "work", "rate",
                "unit", "status", "error"])
    failed = False
    for index, (case, params) in enumerate(SIZES[args.size]):
        if words and case not in words:
            continue
        metric, plan, make = CASES[case]
        shapes, label, work, ops_per_run = plan(params)
        unit = "GB/s" if metric == "bytes" else "GFLOP/s"
        try:
            inputs = make_inputs(shapes, index)
            median, inner, n = measure(make(params), inputs, ops_per_run, warmup, reps,
                                       target_s, budget_s)
            del inputs
            row = [case, label, "numpy", device, f"{median * 1e3:.6f}", metric, f"{work:.0f}",
                   f"{work / median / 1e9:.3f}", unit, "OK", ""]
            print(f"# {case} {label}: {median * 1e3:.3f} ms, {n} x {inner} launches",
                  file=sys.stderr)
        except (MemoryError, ValueError, TypeError) as e:  # go on with the next case
            failed = True
            row = [case, label, "numpy", device, "", metric, f"{work:.0f}", "", unit, "FAILED",
                   str(e).splitlines()[0] if str(e) else type(e).__name__]
        w.writerow(row)
        out.flush()
    if out is not sys.stdout:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
