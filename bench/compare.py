#!/usr/bin/env python3
"""Join a `webtensor bench --csv` file with a peer's (bench/torch_peer.py,
bench/numpy_peer.py) into one table: case, shape, both medians, both
throughputs, and the ratio webtensor / peer in throughput (above 1:
webtensor is faster).

usage: compare.py WEBTENSOR.csv PEER.csv [--backend webgpu] [--peer-backend torch]
                  [--markdown]
"""
import argparse
import csv
import math
import sys

OK = ("OK", "WT_OK")


def read_rows(path, backend=None):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if not backend or r["backend"] == backend]
    return {(r["case"], r["shape"]): r for r in rows}, rows


def fmt_time(ms):
    if ms is None:
        return "n/a"
    if ms < 1.0:
        return f"{ms * 1e3:.2f} us"
    if ms < 1000.0:
        return f"{ms:.3f} ms"
    return f"{ms / 1e3:.3f} s"


def throughput(row):
    """(value, unit text) in GB/s or TFLOP/s; None when the case failed."""
    if row is None or row["status"] not in OK or not row["rate"]:
        return None, ""
    rate = float(row["rate"])
    if row["metric"] == "flops":
        return rate / 1e3, "TFLOP/s"
    return rate, "GB/s"


def fmt_rate(v, unit):
    if v is None:
        return "n/a"
    digits = 0 if v >= 100 else 1 if v >= 10 else 2 if v >= 0.1 else 4
    return f"{v:.{digits}f} {unit}"


def median_ms(row):
    if row is None or row["status"] not in OK or not row["median_ms"]:
        return None
    return float(row["median_ms"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("webtensor_csv")
    ap.add_argument("peer_csv")
    ap.add_argument("--backend", help="webtensor backend to compare (default: webgpu if present)")
    ap.add_argument("--peer-backend", help="backend column to take from the peer file "
                    "(default: its first)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()

    try:
        _, all_ours = read_rows(args.webtensor_csv)
        _, all_peer = read_rows(args.peer_csv)
    except (OSError, KeyError, csv.Error) as e:
        print(f"compare.py: cannot read the CSV files: {e}", file=sys.stderr)
        return 1
    backends = [r["backend"] for r in all_ours]
    backend = args.backend or ("webgpu" if "webgpu" in backends else (backends[0] if backends else None))
    ours, ours_rows = read_rows(args.webtensor_csv, backend)
    peer_backend = args.peer_backend or (all_peer[0]["backend"] if all_peer else None)
    peer, peer_rows = read_rows(args.peer_csv, peer_backend)
    if not ours_rows:
        print(f"compare.py: no rows for backend {backend} in {args.webtensor_csv}", file=sys.stderr)
        return 1
    ours_dev = ours_rows[0]["device"]
    # Files from before the timer column were timed by the wall clock.
    ours_timer = ours_rows[0].get("timer") or "wall"
    ours_timer_text = "GPU time from timestamp queries" if ours_timer == "gpu" else "wall clock"
    peer_dev = peer_rows[0]["device"] if peer_rows else "?"
    peer_name = peer_rows[0]["backend"] if peer_rows else "peer"

    header = ["case", "shape", f"webtensor ({backend})", peer_name, "webtensor rate",
              f"{peer_name} rate", "ratio"]
    table = []
    ratios = []
    keys = list(ours) + [k for k in peer if k not in ours]
    for key in keys:
        o, p = ours.get(key), peer.get(key)
        ov, unit = throughput(o)
        pv, punit = throughput(p)
        unit = unit or punit
        ratio = ov / pv if ov and pv else None
        if ratio:
            ratios.append(ratio)
        table.append([key[0], key[1], fmt_time(median_ms(o)), fmt_time(median_ms(p)),
                      fmt_rate(ov, unit), fmt_rate(pv, unit),
                      f"{ratio:.3f}" if ratio else "n/a"])

    print(f"webtensor {backend} on {ours_dev} ({ours_timer_text})  vs  {peer_name} on {peer_dev}")
    print("ratio = webtensor throughput / peer throughput (1.0 = as fast)")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join(" --- " for _ in header) + "|")
        for row in table:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *table)]
        line = lambda row: "  ".join(  # noqa: E731
            str(x).ljust(w) if i < 2 else str(x).rjust(w) for i, (x, w) in enumerate(zip(row, widths)))
        print(line(header))
        print("  ".join("-" * w for w in widths))
        for row in table:
            print(line(row))
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"geometric mean of ratios over {len(ratios)} cases: {geo:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
