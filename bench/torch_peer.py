#!/usr/bin/env python3
"""PyTorch peer of `webtensor bench`: the same cases at the same shapes.

Run it on the same machine, in the same session, as
`webtensor bench --size large --csv ours.csv`, then join the two files with
bench/compare.py. Ratios from one run mean something; absolute times from
two runs on a shared machine do not.

Timing follows the webtensor engine: seeded uniform inputs in [-1, 1),
rotated over up to 4 sets when one set is under 64 MiB, warm-up runs, then
repetitions of `inner` launches each (inner sized so that a repetition lasts
about 20 ms, at least 20 launches at the large sizes), median per op. A repetition is timed with CUDA events (the
default) or with wall time around torch.cuda.synchronize() (--timer wall,
which is what webtensor measures). TF32 is off: f32 means f32. The *_f16
cases run on float16 tensors (drawn in f32, then converted) and write into
an out= buffer made once.

Output: CSV with the columns of `webtensor bench --csv`:
case,shape,backend,device,median_ms,metric,work,rate,unit,status,error
"""
import argparse
import csv
import math
import statistics
import sys
import time

import torch

import peer_plans as plans

ROTATE_BYTES = 64 * 1024 * 1024
MAX_SETS = 4
MAX_INNER = 100
# As in bench/bench_engine.c: the large size set times at least this many
# launches per repetition (unless that would pass MAX_MIN_INNER_REP_S).
MIN_INNER_LARGE = 20
MAX_MIN_INNER_REP_S = 1.0
LAYERNORM_EPS = 1e-5
RMSNORM_EPS = 1e-6


# ------------------------------------------------------------------ cases
# Each case: (metric, plan, run[, dtype]). plan comes from peer_plans.py
# (shared with numpy_peer.py); run(inputs, params) -> result; dtype of the
# inputs, torch.float32 unless given. The f16 cases write into an out=
# buffer made once with the inputs (see make_inputs), the last tensor of
# each set.

def run_layernorm(x, p):
    return torch.nn.functional.layer_norm(x[0], (p[1],), x[1], x[2], eps=LAYERNORM_EPS)


def run_rmsnorm(x, p):
    if hasattr(torch.nn.functional, "rms_norm"):
        return torch.nn.functional.rms_norm(x[0], (p[1],), x[1], eps=RMSNORM_EPS)
    # Older torch: the same formula in three kernels (slower than a fused one).
    return x[0] * torch.rsqrt(x[0].pow(2).mean(-1, keepdim=True) + RMSNORM_EPS) * x[1]


def run_add_chain(x, p):
    y = x[0] + x[1]
    for _ in range(p[0] - 1):
        y = y + x[1]
    return y


def run_attention(x, p):
    return torch.nn.functional.scaled_dot_product_attention(x[0], x[1], x[2], is_causal=True,
                                                            enable_gqa=p[1] != p[2])


CASES = {
    "add": ("bytes", plans.plan_binary, lambda x, p: torch.add(x[0], x[1])),
    "exp": ("bytes", plans.plan_unary, lambda x, p: torch.exp(x[0])),
    "add_f16": ("bytes", plans.plan_binary_f16, lambda x, p: torch.add(x[0], x[1], out=x[2]),
                torch.float16),
    "exp_f16": ("bytes", plans.plan_unary_f16, lambda x, p: torch.exp(x[0], out=x[1]), torch.float16),
    "sum": ("bytes", plans.plan_sum_all, lambda x, p: x[0].sum()),
    "sum_f16": ("bytes", plans.plan_sum_all_f16, lambda x, p: x[0].sum(), torch.float16),
    "rowsum": ("bytes", plans.plan_rows, lambda x, p: x[0].sum(dim=1)),
    "softmax": ("bytes", plans.plan_softmax, lambda x, p: torch.softmax(x[0], -1)),
    "layernorm": ("bytes", plans.plan_layernorm, run_layernorm),
    "rmsnorm": ("bytes", plans.plan_rmsnorm, run_rmsnorm),
    "softmax_f16": ("bytes", plans.plan_softmax_f16, lambda x, p: torch.softmax(x[0], -1), torch.float16),
    "layernorm_f16": ("bytes", plans.plan_layernorm_f16, run_layernorm, torch.float16),
    "transpose": ("bytes", plans.plan_transpose, lambda x, p: x[0].t().contiguous()),
    "matmul": ("flops", plans.plan_matmul, lambda x, p: torch.matmul(x[0], x[1])),
    "bmm": ("flops", plans.plan_bmm, lambda x, p: torch.matmul(x[0], x[1])),
    "gemv": ("bytes", plans.plan_gemv, lambda x, p: torch.matmul(x[0], x[1])),
    "add_chain": ("bytes", plans.plan_add_chain, run_add_chain),
    "matmul_f16": ("flops", plans.plan_matmul_f16, lambda x, p: torch.matmul(x[0], x[1]), torch.float16),
    "matmul_nt": ("flops", plans.plan_matmul_nt, lambda x, p: torch.matmul(x[0], x[1].t())),
    "bmm_f16": ("flops", plans.plan_bmm_f16, lambda x, p: torch.matmul(x[0], x[1]), torch.float16),
    "matmul_nt_f16": ("flops", plans.plan_matmul_nt_f16, lambda x, p: torch.matmul(x[0], x[1].t()),
                      torch.float16),
    "gemv_f16": ("bytes", plans.plan_gemv_f16, lambda x, p: torch.matmul(x[0], x[1]), torch.float16),
    # --- convolution and attention ---
    "conv2d": ("flops", plans.plan_conv2d, lambda x, p: torch.nn.functional.conv2d(x[0], x[1], padding=1)),
    "conv2d_f16": ("flops", plans.plan_conv2d, lambda x, p: torch.nn.functional.conv2d(x[0], x[1], padding=1),
                   torch.float16),
    "attention": ("flops", plans.plan_attention, run_attention),
    "attention_f16": ("flops", plans.plan_attention, run_attention, torch.float16),
}

SIZES = {
    "quick": [
        ("add", (1 << 20,)), ("exp", (1 << 20,)),
        ("add_f16", (1 << 20,)), ("exp_f16", (1 << 20,)), ("sum", (1 << 20,)), ("sum_f16", (1 << 20,)),
        ("rowsum", (1024, 1024)),
        ("softmax", (1024, 1024)), ("layernorm", (1024, 1024)), ("rmsnorm", (1024, 1024)),
        ("softmax_f16", (1024, 1024)), ("layernorm_f16", (1024, 1024)),
        ("transpose", (1024, 1024)),
        ("matmul", (256, 256, 256)), ("bmm", (16, 128, 128, 128)),
        ("gemv", (1024, 1024)), ("add_chain", (1000, 1024)),
        ("matmul_f16", (256, 256, 256)), ("matmul_nt", (256, 256, 256)), ("bmm_f16", (4, 128, 128, 128)),
        ("matmul_nt_f16", (256, 256, 256)), ("gemv_f16", (1024, 1024)),
        ("conv2d", (2, 16, 28, 16)),
    ],
    "default": [
        ("add", (1 << 24,)), ("exp", (1 << 24,)),
        ("add_f16", (1 << 24,)), ("exp_f16", (1 << 24,)), ("sum", (1 << 24,)), ("sum_f16", (1 << 24,)),
        ("rowsum", (4096, 4096)),
        ("softmax", (4096, 4096)), ("layernorm", (4096, 4096)), ("rmsnorm", (4096, 4096)),
        ("softmax_f16", (4096, 4096)), ("layernorm_f16", (4096, 4096)),
        ("transpose", (4096, 4096)),
        ("matmul", (1024, 1024, 1024)), ("bmm", (32, 256, 256, 256)),
        ("gemv", (4096, 4096)), ("add_chain", (1000, 1024)),
        ("matmul_f16", (1024, 1024, 1024)), ("matmul_nt", (1024, 1024, 1024)), ("bmm_f16", (8, 512, 512, 512)),
        ("matmul_nt_f16", (1024, 1024, 1024)), ("gemv_f16", (4096, 4096)),
        ("conv2d", (8, 64, 56, 64)),
    ],
    "large": [
        ("add", (1 << 28,)), ("exp", (1 << 28,)),
        ("add_f16", (1 << 28,)), ("exp_f16", (1 << 28,)), ("sum", (1 << 28,)), ("sum_f16", (1 << 28,)),
        ("rowsum", (32768, 4096)),
        ("softmax", (32768, 4096)), ("layernorm", (32768, 4096)), ("rmsnorm", (32768, 4096)),
        ("softmax_f16", (32768, 4096)), ("layernorm_f16", (32768, 4096)),
        ("transpose", (32768, 4096)),
        ("matmul", (1024, 1024, 1024)), ("matmul", (4096, 4096, 4096)),
        ("bmm", (64, 512, 512, 512)), ("gemv", (4096, 4096)),
        ("add_chain", (1000, 1024)),
        ("matmul_f16", (4096, 4096, 4096)), ("matmul_nt", (8192, 4096, 4096)), ("bmm_f16", (8, 2048, 2048, 2048)),
        ("matmul_nt_f16", (4096, 4096, 4096)), ("gemv_f16", (4096, 4096)),
        ("conv2d", (32, 64, 56, 64)), ("conv2d_f16", (32, 64, 56, 64)),
        ("attention", (1, 32, 8, 2048)), ("attention_f16", (8, 32, 32, 2048)),
    ],
}


# ----------------------------------------------------------------- timing

class Timer:
    """Times one repetition on the device: CUDA events, or wall time around
    a synchronize (the only choice on the CPU)."""

    def __init__(self, device, kind):
        self.device = device
        self.kind = kind if device.type == "cuda" else "wall"

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def time(self, fn):
        if self.kind == "events":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        self.sync()
        t0 = time.perf_counter()
        fn()
        self.sync()
        return time.perf_counter() - t0


def make_inputs(shapes, item_index, device, dtype):
    """Sets of inputs; an f16 set also gets its out= buffer, last (webtensor
    reuses pooled memory for its outputs)."""
    elem = torch.tensor([], dtype=dtype).element_size()
    set_bytes = sum(elem * math.prod(s) for s in shapes)
    sets = max(1, min(MAX_SETS, math.ceil(ROTATE_BYTES / set_bytes))) if set_bytes else 1
    gen = torch.Generator(device=device)
    out = []
    for s in range(sets):
        gen.manual_seed(item_index * 1000003 + s * 101 + 1)
        # Drawn in f32 and rounded, as webtensor casts its f32 inputs.
        tensors = [(torch.rand(shape, generator=gen, device=device) * 2 - 1).to(dtype)
                   for shape in shapes]
        if dtype == torch.float16:
            tensors.append(torch.empty_like(tensors[0]))
        out.append(tensors)
    return out


def inner_for(per_launch_s, target_s, min_inner):
    if per_launch_s <= 0:
        return MAX_INNER
    floor_n = min(min_inner, math.floor(MAX_MIN_INNER_REP_S / per_launch_s))
    return max(1, min(MAX_INNER, max(math.ceil(target_s / per_launch_s), floor_n)))


def measure(timer, run, params, inputs, ops_per_run, warmup, reps, target_s, min_inner):
    cursor = [0]

    def launches(inner):
        for _ in range(inner):
            run(inputs[cursor[0]], params)
            cursor[0] = (cursor[0] + 1) % len(inputs)

    # Warm up by count and for at least 0.3 s, like webtensor's engine: a
    # GPU that idled while the inputs were made needs time to clock up.
    t = 0.0
    start = time.perf_counter()
    n = 0
    while n < warmup or time.perf_counter() - start < 0.3:
        t = timer.time(lambda: launches(1))
        n += 1
    inner = inner_for(t, target_s, min_inner)
    samples = [timer.time(lambda: launches(inner)) / (inner * ops_per_run) for _ in range(reps)]
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="large")
    ap.add_argument("--filter", default="", help="comma-separated case names")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timer", choices=["events", "wall"], default="events")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--csv", default="-", help="output file ('-': stdout)")
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    timer = Timer(device, args.timer)
    words = [w for w in args.filter.split(",") if w]
    print(f"# torch {torch.__version__} on {name}, timer {timer.kind}", file=sys.stderr)

    out = sys.stdout if args.csv == "-" else open(args.csv, "w", newline="")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["case", "shape", "backend", "device", "median_ms", "metric", "work", "rate",
                "unit", "status", "error"])
    failed = False
    for index, (case, params) in enumerate(SIZES[args.size]):
        if words and case not in words:
            continue
        metric, plan, run, *dtype = CASES[case]
        dtype = dtype[0] if dtype else torch.float32
        shapes, label, work, ops_per_run = plan(params)
        unit = "GB/s" if metric == "bytes" else "GFLOP/s"
        try:
            with torch.no_grad():
                inputs = make_inputs(shapes, index, device, dtype)
                median = measure(timer, run, params, inputs, ops_per_run, args.warmup,
                                 args.reps, 0.020,
                                 MIN_INNER_LARGE if args.size == "large" else 1)
            del inputs
            row = [case, label, "torch", name, f"{median * 1e3:.6f}", metric, f"{work:.0f}",
                   f"{work / median / 1e9:.3f}", unit, "OK", ""]
        except (RuntimeError, MemoryError) as e:  # out of memory and the like: go on
            failed = True
            row = [case, label, "torch", name, "", metric, f"{work:.0f}", "", unit, "FAILED",
                   str(e).splitlines()[0] if str(e) else type(e).__name__]
        w.writerow(row)
        out.flush()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    if out is not sys.stdout:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
